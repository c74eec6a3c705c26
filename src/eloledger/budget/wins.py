"""Win matrix of budget players (arm@budget) played all-against-all within each task.

An *entry* is one session's best-so-far score at one budget; it belongs to one player. In a
task every entry meets every entry of another session (higher score wins, equal scores split
0.5, an unscored entry, ``-inf``, loses to any score and ties with other unscored ones).
Entries of the **same session** never meet: a session always ties or beats its own past, so
those pairs are not independent attempts and would bend the curve away from the
best-of-k law.

The matrix is built without enumerating pairs. Within a task, entries sorted by score fall
into tie groups; a group's histogram over players (weighted by session multiplicity) and the
cumulative sum of those histograms give, for every group and player, the weight below it plus
half the weight tied with it, and ``W = Hᵀ · G`` sums it over the entries. The same-session
pairs are then subtracted. Bootstrap rounds re-weight sessions (``session_weight``) and tasks
(``task_weight``) and rebuild the matrix from the same precomputed order, so a round costs
O(entries + groups x players + players² x groups), never O(entries²).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_CHUNK_CELLS = 4_000_000  # tie groups x players per block, bounds memory


@dataclass(frozen=True)
class _Block:
    """Whole tasks: entries (by sorted position) and their tie groups, numbered locally."""

    entry_group: np.ndarray  # local tie group of each entry
    entry_player: np.ndarray
    entry_session: np.ndarray
    group_task: np.ndarray  # global task index of each local group
    group_task_first: np.ndarray  # local index of the first group of the group's task
    by_player: np.ndarray  # entry positions ordered by player
    player_starts: np.ndarray  # where each present player's run starts in by_player
    players_present: np.ndarray


class WinMatrixBuilder:
    """Precomputes the sort order once; :meth:`build` returns ``W[p, q]`` = wins of p over q."""

    def __init__(
        self,
        *,
        task: np.ndarray,
        session: np.ndarray,
        player: np.ndarray,
        score: np.ndarray,
        n_players: int,
        session_task: np.ndarray,
        session_players: list[np.ndarray],
        session_scores: list[np.ndarray],
    ) -> None:
        """Entries are given by their ``task``, ``session``, ``player`` and ``score`` arrays;
        ``session_task[s]`` and ``session_players[s]`` / ``session_scores[s]`` describe session
        s's own entries (used to remove same-session pairs)."""
        self.n_players = n_players
        self._session_task = np.asarray(session_task)
        self.n_sessions = len(session_players)
        order = np.lexsort((score, task))
        task_s, score_s = task[order], score[order]
        player_s, session_s = player[order], session[order]
        n = len(order)
        new_task = np.ones(n, dtype=bool)
        new_task[1:] = task_s[1:] != task_s[:-1]
        new_group = new_task.copy()
        new_group[1:] |= score_s[1:] != score_s[:-1]
        entry_group = np.cumsum(new_group) - 1
        group_first_entry = np.flatnonzero(new_group)
        group_task = task_s[group_first_entry]
        group_new_task = new_task[group_first_entry]
        task_first_group = np.flatnonzero(group_new_task)
        group_task_first = task_first_group[np.cumsum(group_new_task) - 1]
        # Blocks of whole tasks, so that a block's dense groups x players arrays stay small.
        n_groups = len(group_first_entry)
        max_groups = max(1, _CHUNK_CELLS // max(1, n_players))
        bounds = np.append(task_first_group, n_groups)
        self._blocks: list[_Block] = []
        lo = 0
        while lo < n_groups:
            hi = int(bounds[np.searchsorted(bounds, lo + max_groups, side="right") - 1])
            if hi <= lo:  # one task larger than a block: take it whole
                hi = int(bounds[np.searchsorted(bounds, lo, side="right")])
            first, last = group_first_entry[lo], (group_first_entry[hi] if hi < n_groups else n)
            block_players = player_s[first:last]
            by_player = np.argsort(block_players, kind="stable")
            sorted_players = block_players[by_player]
            starts = np.flatnonzero(np.diff(sorted_players, prepend=-1) != 0)
            self._blocks.append(
                _Block(
                    entry_group=entry_group[first:last] - lo,
                    entry_player=block_players,
                    entry_session=session_s[first:last],
                    group_task=group_task[lo:hi],
                    group_task_first=group_task_first[lo:hi] - lo,
                    by_player=by_player,
                    player_starts=starts,
                    players_present=sorted_players[starts],
                )
            )
            lo = hi
        self._same_session = self._same_session_terms(session_players, session_scores)

    def _same_session_terms(
        self, session_players: list[np.ndarray], session_scores: list[np.ndarray]
    ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per distinct player set: (sessions, players, D[s, p, q]) with D the outcome matrix
        of session s's own entries (including each entry against itself, 0.5)."""
        by_shape: dict[bytes, list[int]] = {}
        for s, players in enumerate(session_players):
            by_shape.setdefault(players.astype(np.int64).tobytes(), []).append(s)
        terms = []
        for indices in by_shape.values():
            players = session_players[indices[0]]
            x = np.stack([session_scores[s] for s in indices])
            d = (x[:, :, None] > x[:, None, :]) + 0.5 * (x[:, :, None] == x[:, None, :])
            terms.append((np.asarray(indices), players, d.astype(np.float64)))
        return terms

    def build(
        self,
        session_weight: np.ndarray | None = None,
        task_weight: np.ndarray | None = None,
    ) -> np.ndarray:
        """Soft wins of each player over each other player (diagonal zero).

        ``session_weight[s]``: multiplicity of session s (inner weight: how many copies of it
        take part); ``task_weight[t]``: multiplicity of task t (scales that task's games).
        """
        n_players = self.n_players
        wins = np.zeros((n_players, n_players))
        for block in self._blocks:
            n_groups = len(block.group_task)
            if session_weight is None:
                weight = np.ones(len(block.entry_group))
            else:
                weight = session_weight[block.entry_session].astype(float)
            hist = np.bincount(
                block.entry_group * n_players + block.entry_player,
                weights=weight,
                minlength=n_groups * n_players,
            ).reshape(n_groups, n_players)
            below = np.cumsum(hist, axis=0)
            below -= hist  # weight strictly below each group, from the start of the block
            below_or_tied = below - below[block.group_task_first] + 0.5 * hist
            # Each entry adds its group's row to its player's row of W; summed per player with
            # reduceat (no BLAS call: threaded BLAS on a busy 2-core machine is 10x slower).
            groups = block.entry_group[block.by_player]
            outer = weight[block.by_player]
            if task_weight is not None:  # a task drawn c times counts its games c times
                outer = outer * task_weight[block.group_task[groups]]
            rows = below_or_tied[groups] * outer[:, None]
            wins[block.players_present] += np.add.reduceat(rows, block.player_starts, axis=0)
        for sessions, players, d in self._same_session:
            factor = np.ones(len(sessions))
            if session_weight is not None:
                factor = factor * session_weight[sessions].astype(float) ** 2
            if task_weight is not None:
                factor = factor * task_weight[self._session_task[sessions]]
            own = np.tensordot(factor, d, axes=1)
            wins[np.ix_(players, players)] -= own
        np.fill_diagonal(wins, 0.0)
        np.clip(wins, 0.0, None, out=wins)
        return wins
