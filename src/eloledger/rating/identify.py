"""Which Elo contrasts the comparisons identify, when the Bradley–Terry MLE does not exist.

The MLE exists iff the directed "beat" graph is strongly connected (Hunter 2004, after Ford
1957). Otherwise the fit falls back to a weak prior (``bt.FALLBACK_PRIOR``) so the numbers stay
finite -- but a finite number there is the prior's, not the data's: a player who never loses
read 1,918 / 2,197 / 2,442 Elo at 10 / 50 / 200 tasks with ±160 / ±58 / ±28 (true +1,042), and
a player in a group never compared with the anchor's read 976 [936, 1016] (true 1,347). So,
relative to the anchor's strongly connected group A (whose contrasts are identified):

* a player whose group sits **above** A in the beat graph (it never lost to A's players) has
  only a lower bound: the smallest rating at which its record against A -- no losses --
  still has probability ≥ (1 − level)/2, ``Σ_q e_q ln σ(x − θ_q) = ln α``, with A's players
  at their fitted ratings (an exact one-sided bound in the spirit of Clopper–Pearson); the
  upper bound is +∞. The games are counted **by task** (``e_q``: each task the player was
  compared in counts as one game, shared among its opponents there): comparisons within a
  task share its samples, so 3 samples per arm make 9 comparisons of one pair that are
  nearly one game, and counting them as 9 put the bound above the true Elo in 23% of runs
  at 5 tasks (promised 2.5%; tests/rating/test_rating_identify_clusters.py). Its point Elo is
  withheld (``elo`` null): any number there would be the fallback prior number;
* a player **below** A gets the mirror image (−∞, upper bound];
* a player with no path either way, or in another weakly connected group, is **not
  identified**: no Elo against the anchor (``elo`` null, interval (−∞, +∞)), only a
  ``group_elo`` against its own group's first player, and rank intervals that span them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components, shortest_path
from scipy.special import log_expit

from eloledger.rating.bt import ELO_BASE, ELO_SCALE, fit_bt


@dataclass
class Identification:
    """Per player: "yes", "lower_bound", "upper_bound" or "no", and the bounds (Elo)."""

    status: list[str]
    ci_low: np.ndarray
    ci_high: np.ndarray
    group: list[int]  # index of the first player of each player's weakly connected group
    group_elo: np.ndarray  # Elo against that player (within-group contrast)

    @property
    def unidentified(self) -> int:
        return sum(s == "no" for s in self.status)


def task_games(comparisons) -> np.ndarray:
    """Games counted by task (n x n): in each task, a player's comparisons add up to one game,
    shared among its opponents in proportion to their comparisons there."""
    n = comparisons.n_players
    i, j, t, w = comparisons.i, comparisons.j, comparisons.task, comparisons.weight.astype(float)
    key_i, key_j = t * n + i, t * n + j
    per = np.bincount(np.concatenate([key_i, key_j]), np.concatenate([w, w]),
                      minlength=comparisons.n_tasks * n)  # fmt: skip
    out = np.zeros((n, n))
    np.add.at(out, (i, j), np.divide(w, per[key_i], out=np.zeros_like(w), where=per[key_i] > 0))
    np.add.at(out, (j, i), np.divide(w, per[key_j], out=np.zeros_like(w), where=per[key_j] > 0))
    return out


def identify(
    W: np.ndarray,
    theta: np.ndarray,
    anchor: int,
    level: float = 0.95,
    games: np.ndarray | None = None,
) -> Identification:
    """Classify every player's contrast with ``anchor`` from the win matrix ``W`` (see module).
    ``games``: games counted by task (:func:`task_games`) for the one-sided bounds; without
    it every weighted comparison counts as an independent game."""
    counted = W + W.T if games is None else games
    n = W.shape[0]
    beat = csr_matrix(W > 0)
    _, weak = connected_components(csr_matrix((W + W.T) > 0), directed=False)
    _, strong = connected_components(beat, directed=True, connection="strong")
    reach = np.isfinite(shortest_path(beat, unweighted=True, directed=True))
    alpha = (1.0 - level) / 2.0
    core = np.flatnonzero(strong == strong[anchor])
    status: list[str] = []
    low = np.full(n, -np.inf)
    high = np.full(n, np.inf)
    for p in range(n):
        if strong[p] == strong[anchor]:
            status.append("yes")
            low[p] = high[p] = np.nan  # the caller's interval stands
            continue
        beats_core = reach[p, core].any()
        beaten_by_core = reach[core, p].any()
        if weak[p] != weak[anchor] or beats_core == beaten_by_core:
            status.append("no")
            continue
        sign = 1.0 if beats_core else -1.0
        bound = _bound(theta[core], counted[p, core], sign, alpha)
        status.append("lower_bound" if beats_core else "upper_bound")
        if bound is not None:
            elo = ELO_BASE + ELO_SCALE * (bound - theta[anchor])
            if beats_core:
                low[p] = elo
            else:
                high[p] = elo
    first = {int(c): int(np.flatnonzero(weak == c)[0]) for c in np.unique(weak)}
    group = [first[int(weak[p])] for p in range(n)]
    group_elo = ELO_BASE + ELO_SCALE * (theta - theta[np.array(group)])
    for c in np.unique(weak[[p for p in range(n) if status[p] == "no"]]):
        members = np.flatnonzero(weak == c)  # refit the group on its own games: no prior pull
        own = fit_bt(W[np.ix_(members, members)]).theta
        group_elo[members] = ELO_BASE + ELO_SCALE * (own - own[0])
    return Identification(status, low, high, group, group_elo)


def _bound(opponents: np.ndarray, games: np.ndarray, sign: float, alpha: float) -> float | None:
    """θ at which a record of only wins (sign +1) or only losses (sign −1) against these
    opponents has probability α; None without direct games."""
    mask = games > 0
    if not mask.any():
        return None
    opp, w = opponents[mask], games[mask]

    def log_p(x: float) -> float:
        return float(np.sum(w * log_expit(sign * (x - opp)))) - math.log(alpha)

    lo, hi = float(opp.min()) - 50.0, float(opp.max()) + 50.0
    if log_p(lo) * log_p(hi) > 0:
        return None
    return float(brentq(log_p, lo, hi, xtol=1e-9))
