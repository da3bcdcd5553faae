"""Exact English-checkers endgame databases built by nowdb, probed from Python.

Open a database directory (a nowdb site's ``db/``) and ask for the value of a
position, given as a PDN FEN in standard numbering (Black starts on 1..12)::

    import nowdb

    with nowdb.open("/data/site/db") as db:
        db.probe("B:W18,K12:B3,5")        # "win", "loss" or "draw" for the side to move
        db.probe_many(fens)               # a list of values, the GIL released meanwhile
        for move, fen_after, value in db.moves("W:W21,22:B9,K14"):
            print(move, fen_after, value) # value for the side that plays the move

Errors: a bad FEN raises ValueError; a missing directory FileNotFoundError; a
position the database has no slice for (too many pieces) nowdb.UnavailableError
(a LookupError); a damaged file nowdb.DatabaseError (an OSError).
"""

from ._nowdb import Database, DatabaseError, UnavailableError, open

__all__ = ["Database", "DatabaseError", "UnavailableError", "open"]
__version__ = "0.1.0"
