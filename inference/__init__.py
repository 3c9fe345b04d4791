"""Administering ENEM items to models: question texts, prompts, option shuffles, backends.

Store-independent: pure functions and classes that the run orchestration calls. Importing this
package does not import torch or any API client (backends load lazily via
``inference.backends.make_scorer``).
"""
