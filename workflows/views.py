"""The dashboard's views as plain data: one file each under ``pages/``, in menu order.

The menu (:mod:`dashboard.navigation`), the report and presentation (:mod:`workflows.report`),
the pages that link to another page and the page benchmarks all read this one list, so a view's
order, title and URL are written once. It lives below the dashboard because the report, which
runs the pages headless, is orchestration and must not import the dashboard. A new view: add its
file under ``pages/`` and one line here, in its section.

How an address names a shots setting (``shots=4``, ``shots=published``) is here too, for the
same readers and the command line: :func:`shots_to_url` and :func:`shots_from_url`.
"""

from __future__ import annotations

from dataclasses import dataclass

from store.model_sql import UNCOUNTED_SHOTS


@dataclass(frozen=True)
class View:
    """One page of the dashboard: its file (relative to the project root), menu title and
    section, and whether the report and presentation show its figures."""

    file: str
    title: str
    #: The menu section heading it is listed under (one of :data:`SECTIONS`).
    section: str = "The paper's analyses"
    #: False for pages of tables and controls (Data, Runs), which hold no figure to present.
    in_report: bool = True

    @property
    def url_path(self) -> str:
        """The URL path: the file's name without ``.py``. It is also the name Streamlit gives a
        page file it runs on its own (a deep link as a fresh server's first request, AppTest),
        so both routes agree on which page a URL means and shared links keep working."""
        return self.file.removeprefix("pages/").removesuffix(".py")


#: Menu sections, in order.
SECTIONS: tuple[str, ...] = ("Overview", "The paper's analyses", "Beyond the paper",
                             "Items, data and runs")

#: The default page, served at the root URL (its url_path only names it internally).
HOME = View("pages/home.py", "Home", "Overview")
ITEM_EXPLORER = View("pages/Item_explorer.py", "Item explorer", "Items, data and runs")
ITEM_GAPS = View("pages/Item_gaps.py", "Item gaps", "Beyond the paper")
RUNS = View("pages/Runs.py", "Runs", "Items, data and runs", in_report=False)

VIEWS: tuple[View, ...] = (
    HOME,
    View("pages/Accuracy_vs_ability.py", "Accuracy vs ability"),
    View("pages/Person_fit.py", "Person fit"),
    View("pages/Response_patterns.py", "Response patterns"),
    View("pages/Test_information.py", "Test information"),
    View("pages/Discrimination.py", "Discrimination"),
    View("pages/Paper_tables.py", "Paper tables"),
    View("pages/Populations.py", "Populations", "Beyond the paper"),
    View("pages/Conditions.py", "Conditions", "Beyond the paper"),
    View("pages/Years.py", "Years", "Beyond the paper"),
    View("pages/Options_and_traps.py", "Options and traps", "Beyond the paper"),
    ITEM_GAPS,
    View("pages/Adaptive_testing.py", "Adaptive testing", "Beyond the paper"),
    ITEM_EXPLORER,
    View("pages/Data.py", "Data", "Items, data and runs", in_report=False),
    RUNS,
)


#: How a dashboard address (``shots=``) names :data:`UNCOUNTED_SHOTS`.
UNCOUNTED_SHOTS_URL = "published"


def shots_to_url(shots: int) -> str:
    """The ``shots=`` value of a shots setting in a dashboard address."""
    return UNCOUNTED_SHOTS_URL if int(shots) == UNCOUNTED_SHOTS else str(int(shots))


def shots_from_url(value: str) -> int:
    """The shots setting a dashboard address's ``shots=`` value names (ValueError when it is
    neither a whole number nor ``published``)."""
    value = value.strip()
    return UNCOUNTED_SHOTS if value == UNCOUNTED_SHOTS_URL else int(value)
