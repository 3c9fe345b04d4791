"""The versioned DuckDB schema, created by code.

The tables hold every ingested year, the scored results of humans and models, the
pre-aggregated tables the dashboard reads, and the model runs. Humans and models are scored by
the same code and land in tables with the same score columns (θ, SE, l_z, l_z*, CTT, nota).
Where the tables live (one file, or a file per year beside one for runs and metadata) is
``store.layout``'s business: the year tables are :data:`YEAR_PART_TABLES`, the rest
:data:`CORE_TABLES`.
"""

from __future__ import annotations

import functools

import duckdb

SCHEMA_VERSION = 3

_SCORE_COLUMNS = """
    theta DOUBLE, theta_se DOUBLE, lz DOUBLE, lz_star DOUBLE,
    ctt SMALLINT, n_scored SMALLINT, nota DOUBLE
"""

TABLES: dict[str, str] = {
    "meta": "key VARCHAR PRIMARY KEY, value VARCHAR",
    # One row per successful ingest; the newest per year is the live one.
    "ingests": """
        ingest_id INTEGER PRIMARY KEY, year INTEGER, source VARCHAR, layout VARCHAR,
        microdata_file VARCHAR, items_file VARCHAR, encoding VARCHAR,
        started_at TIMESTAMP, finished_at TIMESTAMP, seconds DOUBLE,
        rows_read BIGINT, records_present BIGINT, patterns_scored BIGINT, rows_rejected BIGINT,
        nota_checked BIGINT, nota_matched BIGINT, is_synthetic BOOLEAN,
        scoring VARCHAR, items_only BOOLEAN, audit_scoring VARCHAR
    """,
    "booklets": """
        year INTEGER, booklet_id INTEGER, area VARCHAR, colour VARCHAR, n_items SMALLINT,
        n_abandoned SMALLINT, valid BOOLEAN, problem VARCHAR, note VARCHAR,
        PRIMARY KEY (year, booklet_id)
    """,
    # Per booklet of an ingest: candidates present, scored, and how many official notas the
    # published parameters reproduce to the decimal by INEP's recipe (``ingests.audit_scoring``;
    # NULL in files made before: those compared the year's display settings).
    "booklet_audit": """
        year INTEGER, booklet_id INTEGER, area VARCHAR, present BIGINT, scored BIGINT,
        nota_checked BIGINT, nota_matched BIGINT, PRIMARY KEY (year, booklet_id)
    """,
    "items": """
        year INTEGER, booklet_id INTEGER, area VARCHAR, item_language SMALLINT,
        position SMALLINT, co_posicao INTEGER, item_id BIGINT, key VARCHAR, skill INTEGER,
        a DOUBLE, b DOUBLE, c DOUBLE, abandoned BOOLEAN, abandon_reason VARCHAR, adapted BOOLEAN,
        colour VARCHAR, problem VARCHAR, version SMALLINT
    """,
    # Wide: one row per candidate, the four areas side by side as in the microdata; the view
    # area_records gives the long form.
    "examinees": """
        year INTEGER, examinee_id VARCHAR, language SMALLINT, state VARCHAR, school_type SMALLINT,
        sex VARCHAR, race SMALLINT, age_band SMALLINT, income VARCHAR,
        presence_cn SMALLINT, presence_ch SMALLINT, presence_lc SMALLINT, presence_mt SMALLINT,
        booklet_cn INTEGER, booklet_ch INTEGER, booklet_lc INTEGER, booklet_mt INTEGER,
        nota_official_cn DOUBLE, nota_official_ch DOUBLE, nota_official_lc DOUBLE,
        nota_official_mt DOUBLE,
        responses_cn VARCHAR, responses_ch VARCHAR, responses_lc VARCHAR, responses_mt VARCHAR,
        school_admin SMALLINT, father_education VARCHAR, mother_education VARCHAR,
        internet VARCHAR
    """,
    # state and school_type are copied from examinees so subgroup queries need no join.
    "scores": f"""
        year INTEGER, examinee_id VARCHAR, area VARCHAR, booklet_id INTEGER, item_language SMALLINT,
        {_SCORE_COLUMNS}, blank BOOLEAN, state VARCHAR, school_type SMALLINT
    """,
    "rejects": """
        ingest_id INTEGER, year INTEGER, kind VARCHAR, line BIGINT, examinee_id VARCHAR,
        area VARCHAR, reason VARCHAR, detail VARCHAR
    """,
    "option_counts": """
        year INTEGER, area VARCHAR, item_id BIGINT, item_language SMALLINT, option VARCHAR, n BIGINT
    """,
    # Humans' option counts per item and θ bin (lower edge, width ICC_BIN_WIDTH), for option
    # choices conditional on ability (θ-conditional trap items).
    "option_theta_counts": """
        year INTEGER, area VARCHAR, item_id BIGINT, item_language SMALLINT, theta_bin DOUBLE,
        option VARCHAR, n BIGINT
    """,
    # Humans' counts by summed score, one block per booklet form (booklet, LC language; NULL
    # outside LC), for item fit (S-X²) and Mantel–Haenszel DIF. A row: of the form's n
    # candidates whose number correct is ``score``, ``correct`` were right on the item at
    # ``position`` (1-based place in the form's answer string). The score and the rows count
    # the items the CTT score counts (those with parameters: not abandoned or annulled), blank
    # and multiple marks wrong; all-blank tests are left out, and so are scores no candidate
    # holds (enem/score_tables.py). Absent from years ingested before the table existed.
    "item_score_counts": """
        year INTEGER, area VARCHAR, booklet_id INTEGER, item_language SMALLINT, item_id BIGINT,
        position SMALLINT, score SMALLINT, n BIGINT, correct BIGINT
    """,
    "item_stats": """
        year INTEGER, area VARCHAR, item_id BIGINT, item_language SMALLINT, n BIGINT,
        p_value DOUBLE, point_biserial DOUBLE, di DOUBLE, di_fraction DOUBLE
    """,
    "item_icc": """
        year INTEGER, area VARCHAR, item_id BIGINT, item_language SMALLINT, theta_bin DOUBLE,
        n BIGINT, n_correct BIGINT
    """,
    # The histograms keep all-blank tests (no answer marked) in rows of their own (blank true),
    # so the dashboard can leave them out; files made before the column read NULL (not blank).
    # se_sum: the cell's sum of SE(θ), for the humans' mean SE at a θ (NULL in older files).
    "agg_theta_ctt": """
        year INTEGER, area VARCHAR, booklet_id INTEGER, group_kind VARCHAR, group_value VARCHAR,
        theta_bin DOUBLE, ctt SMALLINT, n BIGINT, blank BOOLEAN, se_sum DOUBLE
    """,
    "agg_theta_lz": """
        year INTEGER, area VARCHAR, booklet_id INTEGER, group_kind VARCHAR, group_value VARCHAR,
        theta_bin DOUBLE, lz_bin DOUBLE, n BIGINT, blank BOOLEAN
    """,
    # l_z* (Snijders' corrected l_z) binned like l_z, in the same columns (lz_bin holds the
    # l_z* bin), so one query reads either. Absent from years ingested before the table existed.
    "agg_theta_lz_star": """
        year INTEGER, area VARCHAR, booklet_id INTEGER, group_kind VARCHAR, group_value VARCHAR,
        theta_bin DOUBLE, lz_bin DOUBLE, n BIGINT, blank BOOLEAN
    """,
    "question_texts": """
        year INTEGER, item_id BIGINT, language VARCHAR, stem VARCHAR, option_a VARCHAR,
        option_b VARCHAR, option_c VARCHAR, option_d VARCHAR, option_e VARCHAR, key VARCHAR,
        annulled BOOLEAN, source VARCHAR, PRIMARY KEY (year, item_id, language)
    """,
    "models": """
        model_id VARCHAR PRIMARY KEY, family VARCHAR, size VARCHAR, instruction_tuned BOOLEAN,
        notes VARCHAR
    """,
    "model_runs": """
        run_id VARCHAR PRIMARY KEY, model_id VARCHAR, backend VARCHAR, origin VARCHAR,
        year INTEGER, areas VARCHAR, languages VARCHAR, shots VARCHAR, n_shuffles INTEGER,
        seed BIGINT, status VARCHAR, created_at TIMESTAMP, finished_at TIMESTAMP,
        error VARCHAR, options VARCHAR, years VARCHAR, repetition VARCHAR,
        prompt_type VARCHAR, temperature DOUBLE, source VARCHAR, scoring VARCHAR, label VARCHAR
    """,
    # One row per (item, prompt variant, shuffle) a model answered; letters are original ones.
    # answer_text: the generated answer (the generate answer method), else NULL.
    # permutation: the original letter shown under each of A-E; may be partial ('?' = not
    # recorded, as for the paper's imported shuffles, whose file gives the key and the choice).
    "model_responses": """
        run_id VARCHAR, year INTEGER, area VARCHAR, booklet_id INTEGER, item_language SMALLINT,
        position SMALLINT, item_id BIGINT, prompt_language VARCHAR, shots SMALLINT,
        shuffle INTEGER, permutation VARCHAR, prob_a DOUBLE, prob_b DOUBLE, prob_c DOUBLE,
        prob_d DOUBLE, prob_e DOUBLE, letter_mass DOUBLE, choice VARCHAR, correct BOOLEAN,
        answer_text VARCHAR
    """,
    # One row per response pattern (model × prompt variant × shuffle), scored like a human.
    "model_scores": f"""
        run_id VARCHAR, year INTEGER, area VARCHAR, booklet_id INTEGER, item_language SMALLINT,
        prompt_language VARCHAR, shots SMALLINT, shuffle INTEGER, response_pattern VARCHAR,
        {_SCORE_COLUMNS}, sampling_seed BIGINT, published_theta DOUBLE, published_se DOUBLE,
        published_lz DOUBLE
    """,
    # Derived from the question texts (and correctable by hand): what an item contains.
    "item_attributes": """
        year INTEGER, item_id BIGINT, has_image BOOLEAN, numbers_in_statement BOOLEAN,
        numbers_in_options BOOLEAN, source VARCHAR, PRIMARY KEY (year, item_id)
    """,
    # Min-K% Prob (inference/min_k.py, Eq. 4): −mean of the lowest K% token log-probs, ≥ 0.
    "min_k_prob": """
        model_id VARCHAR, year INTEGER, item_id BIGINT, language VARCHAR, k_percent DOUBLE,
        value DOUBLE
    """,
    # One row per step of a live adaptive test (CAT): the item asked, the answer, θ̂ and SE
    # after it; ``path`` tells the option shuffles of one run apart (docs/adaptive_testing.md).
    "cat_paths": """
        run_id VARCHAR, model_id VARCHAR, label VARCHAR, backend VARCHAR, year INTEGER,
        area VARCHAR, booklet_id INTEGER, prompt_language VARCHAR, shots SMALLINT, path INTEGER,
        step SMALLINT, item_id BIGINT, position SMALLINT, choice VARCHAR, correct BOOLEAN,
        theta DOUBLE, theta_se DOUBLE, settings VARCHAR, created_at TIMESTAMP
    """,
    # Human populations (store/populations.py): per area and group, n, mean, SD, SE of the mean
    # and the quantiles at 0, 1, …, 100% (exact, quantile_cont) of θ, nota and percent correct;
    # booklets 'all', or 'reproduced' (flagged booklets left out; only when some are flagged).
    "agg_populations": """
        year INTEGER, area VARCHAR, booklets VARCHAR, group_kind VARCHAR, group_value VARCHAR,
        n BIGINT, theta_mean DOUBLE, theta_sd DOUBLE, theta_se DOUBLE, theta_quantiles DOUBLE[],
        nota_mean DOUBLE, nota_sd DOUBLE, nota_se DOUBLE, nota_quantiles DOUBLE[],
        ctt_mean DOUBLE, ctt_sd DOUBLE, pct_mean DOUBLE, pct_sd DOUBLE, pct_se DOUBLE,
        pct_quantiles DOUBLE[], theta_pv_mean DOUBLE, theta_pv_sd DOUBLE, theta_pv_se DOUBLE
    """,
}

VIEWS: dict[str, str] = {
    "area_records": " UNION ALL ".join(
        f"""SELECT year, examinee_id, '{area.upper()}' AS area, booklet_{area} AS booklet_id,
                   presence_{area} AS presence, language, responses_{area} AS responses,
                   nota_official_{area} AS nota_official
            FROM examinees"""
        for area in ("cn", "ch", "lc", "mt")
    ),
}

#: Tables whose rows belong to one ENEM year and are replaced when that year is re-ingested.
YEAR_TABLES: tuple[str, ...] = (
    "booklets", "booklet_audit", "items", "examinees", "scores", "option_counts", "item_stats",
    "item_icc", "agg_theta_ctt", "agg_theta_lz", "agg_theta_lz_star", "option_theta_counts",
    "agg_populations", "item_score_counts",
)


#: Every table whose rows belong to one ENEM year: what a year's file holds in a store of
#: per-year files (``store.layout``). The rejects are the year's ingest's.
YEAR_PART_TABLES: tuple[str, ...] = YEAR_TABLES + ("rejects",)

#: The tables of runs and metadata (the rest): what the store's main file holds there.
CORE_TABLES: tuple[str, ...] = tuple(name for name in TABLES if name not in YEAR_PART_TABLES)


def ensure_schema(con: duckdb.DuckDBPyConnection,
                  tables: tuple[str, ...] = tuple(TABLES), views: bool = True) -> None:
    """Create the missing ones of ``tables`` (default: all) and, with ``views``, the views, in
    the connection's current database, and record the schema version there.

    Raises RuntimeError if the file was made by a newer, incompatible schema.
    """
    con.execute("CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
    found = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if found and int(found[0]) > SCHEMA_VERSION:
        raise RuntimeError(
            f"database schema version {found[0]} is newer than this code ({SCHEMA_VERSION}); "
            "update the project"
        )
    have: dict[str, set[str]] = {}
    for table, column in con.execute(
            "SELECT table_name, column_name FROM duckdb_columns() "
            "WHERE database_name = current_database() AND schema_name = current_schema()"
            ).fetchall():
        have.setdefault(table, set()).add(column)
    for name in tables:
        if name not in have:
            con.execute(f"CREATE TABLE {name} ({TABLES[name]})")
            continue
        # A table made by an older schema: append the columns it lacks. New columns are only
        # ever added at the end of a definition, so an upgraded file has the same column order
        # as a new one (``insert_rows`` relies on it).
        for column, column_type in declared_columns(name):
            if column not in have[name]:
                con.execute(f"ALTER TABLE {name} ADD COLUMN {column} {column_type}")
    if views:
        for name, body in VIEWS.items():
            con.execute(f"CREATE OR REPLACE VIEW {name} AS {body}")
    if "min_k_prob" in tables:
        # Min-K% Prob is −mean log p (≥ 0, Beyond accuracy's Eq. 4); files written before held
        # the mean itself (≤ 0, same magnitude). Idempotent: a current value is never negative.
        con.execute("UPDATE min_k_prob SET value = -value WHERE value < 0")
    con.execute(
        "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)]
    )


@functools.cache
def declared_columns(name: str) -> tuple[tuple[str, str], ...]:
    """(column, type) of table ``name`` as :data:`TABLES` declares it, in order."""
    with duckdb.connect(":memory:") as scratch:
        scratch.execute(f"CREATE TABLE declared ({TABLES[name]})")
        return tuple((column, column_type) for column, column_type, *_ in
                     scratch.execute("DESCRIBE declared").fetchall())
