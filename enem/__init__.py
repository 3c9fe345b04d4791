"""ENEM (INEP microdata) knowledge: areas, booklet forms, response strings, scoring glue.

Everything here turns INEP's file conventions into the arrays that ``analytics`` scores; it holds
no psychometrics of its own and no database code.
"""
