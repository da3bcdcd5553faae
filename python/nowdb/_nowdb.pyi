"""Type hints of nowdb's extension module (nowdb._nowdb), re-exported by nowdb."""

import os
import pathlib
from types import TracebackType
from typing import Iterable, List, Literal, Optional, Tuple, Type, Union, final

from typing_extensions import Self, TypeAlias

__all__ = ["Database", "DatabaseError", "UnavailableError", "open"]

# Names for the stub only (nothing of the kind exists at run time):
# a position's value for its side to move, or a move's value for the side that plays it;
_Value: TypeAlias = Literal["win", "loss", "draw"]
# and a directory as open() takes it.
_StrPath: TypeAlias = Union[str, "os.PathLike[str]"]

class UnavailableError(LookupError):
    """The database has no value for the position: it has more pieces than the database
    holds, or the directory lacks the slice it needs."""

class DatabaseError(OSError):
    """A database file is damaged (a CRC error, a block that does not decode) or not of
    the format this nowdb reads."""

@final
class Database:
    """An open nowdb database directory (a site's ``db/``): exact win/loss/draw values of
    English-checkers positions.

    ``Database(directory, cache_mb=64)`` opens it with a block cache of about
    ``cache_mb`` MiB; :func:`open` does the same. It raises FileNotFoundError when the
    directory is missing or holds no nowdb database, and :class:`DatabaseError` when it
    is of another format version. Use it as a context manager, or call :meth:`close`, to
    free the cache early. One Database may be probed from many threads at once: every
    probe releases the GIL.
    """

    def __new__(cls, directory: _StrPath, cache_mb: int = 64) -> Self: ...
    @property
    def directory(self) -> pathlib.Path:
        """The database directory, as given when it was opened."""
    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""
    def probe(self, fen: str) -> _Value:
        """The value of the position for its side to move: "win", "loss" or "draw".

        ``fen`` is a PDN FEN in standard numbering, e.g. ``"B:W18,K12:B3,5"`` (Black to
        move). Raises ValueError for a bad FEN (the message names it and the bad part),
        :class:`UnavailableError` when the database has no slice for the position, and
        :class:`DatabaseError` (an OSError) when a file is damaged.
        """
    def probe_many(self, fens: Iterable[str]) -> List[_Value]:
        """The values of many positions, in order: like ``[probe(f) for f in fens]``,
        with the GIL released for the whole batch.

        ``fens`` is any iterable of FEN strings (a list, a generator, a file's lines; a
        single str is refused with TypeError); a bad FEN raises ValueError before any
        position is probed.
        """
    def moves(self, fen: str) -> List[Tuple[str, str, _Value]]:
        """Every legal move of the position, in generation order, as
        ``(move, fen_after, value)`` tuples: the move as ``"9-14"`` or ``"10x17"`` (a
        capture by its first and last square), the FEN after it (the opponent to move),
        and its value for the side that plays it.

        The position is a "win" iff some move is a "win", and a "loss" iff every move is
        a "loss" (or there is none: a side that cannot move has lost). Raises as
        :meth:`probe` does.
        """
    def mtc(self, fen: str) -> Optional[int]:
        """Moves to conversion: the plies until the next capture or man's move under best
        play, for the side to move (a won position's fewest, a lost one's most), or None
        for a draw. 0 when the game is over (a side without pieces, or no legal move).

        Read from the directory's ``mtc/`` files (a site built with ``jobrunner
        build-local --mtc``). Below their threshold (10 plies) they store only "short",
        and the exact number is found by a search over king moves (about 13 positions on
        average). Raises :class:`UnavailableError` when the database has no distances for
        the position, otherwise as :meth:`probe` does.
        """
    def close(self) -> None:
        """Frees the block cache; probing afterwards raises ValueError. Closing twice is
        fine."""
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> Literal[False]: ...

def open(directory: _StrPath, cache_mb: int = 64) -> Database:
    """Opens the nowdb database in ``directory`` (a site's ``db/``) with a block cache of
    about ``cache_mb`` MiB: the same as ``Database(directory, cache_mb)``."""
