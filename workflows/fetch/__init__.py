"""Getting real data in one step (``enem-llm fetch``): download a public source with resume,
check it, extract what the project reads, and hand it to the same ingest or import a user
would run by hand.

- ``sources``: where each source lives (INEP's microdata, the seed paper's repository,
  maritaca-ai's question texts) and what is taken from it; mirrors.
- ``download``: one URL to one file, resumable, size-checked, renamed into place at the end.
- ``archives``: ZIP members found by name, checked and streamed to their destination.
- ``inep``, ``paper``, ``texts``: one workflow per ``fetch`` sub-command; ``stored``: the
  years the store holds, checked before a download the import would refuse.
- ``errors``: the failures they report (each one line on the command line).
- ``progress``: a fetch's phase and byte counts in a JSON file another process reads
  (``--progress-file``); ``launch``: a fetch started in the background from the dashboard,
  with that file, its lock and its log in ``<store>.fetch/``.

docs/fetch.md describes the sources, sizes, mirrors, resume and certificates.
"""
