#!/usr/bin/env python3
"""Fusion rules compared offline, on the dumps `examples/eval.rs --dump` writes.

Each dump line holds one query's lexical pool (path, score, exact, matched
terms) and the similarity of the 100 nearest memories and of every lexical
match. This replays the candidate rules on them and prints R@5 / MRR@10 per
set and per query type (the `type` of the dev set's queries, else `lang`),
words alone and meaning alone beside them, so a rule is chosen by its worst
type, never by its mean.

    python3 benches/fusion.py NAME=DUMP.jsonl ... [--rule NAME ...]
"""
import json
import math
import sys
from collections import defaultdict


def load(path):
    out = []
    with open(path) as f:
        for line in f:
            q = json.loads(line)
            q["lex"] = [(p, s, e, m) for p, s, e, m in q["lexical"]]
            q["sim"] = {p: s for p, s in q["similar"]}
            out.append(q)
    return out


def order(scores, exact=()):
    """Paths best first: exact hits, then score, ties by path."""
    return [p for p, _ in sorted(scores.items(), key=lambda kv: (kv[0] not in exact, -kv[1], kv[0]))]


def words(q, _):
    return [p for p, *_ in q["lex"]]


def meaning(q, _):
    return order(q["sim"])


def current(q, a):
    """Today's rule: lexical / best + weight * clamp((sim - (best - spread)) / spread)."""
    w, spread = a.get("w", 1.0), a.get("spread", 0.05)
    best_l = max((s for _, s, _, _ in q["lex"]), default=0.0)
    best_s = max(q["sim"].values(), default=0.0)
    scores = defaultdict(float)
    for p, s, _, _ in q["lex"]:
        scores[p] += s / best_l if best_l > 0 else 0
    for p, s in q["sim"].items():
        scores[p] += w * min(max((s - (best_s - spread)) / spread, 0.0), 1.0)
    exact = {p for p, _, e, _ in q["lex"] if e}
    return order({p: v for p, v in scores.items() if v > 0 or p in exact}, exact)


def rrf(q, a):
    k, w = a.get("k", 60), a.get("w", 1.0)
    scores = defaultdict(float)
    for i, (p, *_) in enumerate(q["lex"]):
        scores[p] += 1.0 / (k + i + 1)
    for i, p in enumerate(order(q["sim"])):
        scores[p] += w / (k + i + 1)
    exact = {p for p, _, e, _ in q["lex"] if e} if a.get("exact", 1) else set()
    return order(scores, exact)


def convex(q, a):
    """Bruch et al.'s convex combination with a fixed (theoretical) floor:
    (1 - alpha) * lexical / best + alpha * (sim - lo) / (hi - lo), clamped."""
    alpha, lo, hi = a.get("alpha", 0.5), a.get("lo", 0.7), a.get("hi", 0.95)
    best_l = max((s for _, s, _, _ in q["lex"]), default=0.0)
    scores = defaultdict(float)
    for p, s, _, _ in q["lex"]:
        scores[p] += (1 - alpha) * (s / best_l if best_l > 0 else 0)
    for p, s in q["sim"].items():
        scores[p] += alpha * min(max((s - lo) / (hi - lo), 0.0), 1.0)
    exact = {p for p, _, e, _ in q["lex"] if e} if a.get("exact", 1) else set()
    return order(scores, exact)


def zscore(q, a):
    """Each side standardised over the query's candidates."""
    w = a.get("w", 1.0)
    sims = sorted(q["sim"].values(), reverse=True)[:100]
    mu = sum(sims) / len(sims) if sims else 0
    sd = math.sqrt(sum((s - mu) ** 2 for s in sims) / len(sims)) if sims else 1
    lexs = [s for _, s, _, _ in q["lex"]]
    best_l = max(lexs, default=0.0)
    scores = defaultdict(float)
    for p, s, _, _ in q["lex"]:
        scores[p] += s / best_l if best_l > 0 else 0
    for p, s in q["sim"].items():
        z = (s - mu) / sd if sd > 0 else 0
        scores[p] += w * max(z, 0.0) / a.get("zmax", 4.0)
    exact = {p for p, _, e, _ in q["lex"] if e}
    return order(scores, exact)


def guarded(q, a):
    """Today's rule with three changes, each switchable:
    - `rest`: the lexical side is scaled by the best match that is not an
      exact hit (exact hits are placed first anyway, and a trigger's bonus
      would otherwise crush every other match's share);
    - `eta`: a memory that shares no word with the query gets only this
      share of its meaning;
    - `rho`, `delta`: a clear lexical winner (the next match scores under
      `rho` of it) keeps its place unless a memory is `delta` more similar."""
    w, spread = a.get("w", 1.0), a.get("spread", 0.05)
    eta, rho, delta = a.get("eta", 1.0), a.get("rho", 0.0), a.get("delta", 0.0)
    lex = q["lex"]
    exact = {p for p, _, e, _ in lex if e}
    rest = [s for _, s, e, _ in lex if not e] if a.get("rest", 0) else []
    best_l = max(rest or [s for _, s, _, _ in lex] or [0.0])
    sim = q["sim"]
    best_s = max(sim.values(), default=0.0)
    lexical = {p: min(s / best_l, 1.0) if best_l > 0 else 0 for p, s, _, _ in lex}
    scores = {}
    for p in set(lexical) | set(sim):
        part = w * min(max((sim.get(p, -1) - (best_s - spread)) / spread, 0.0), 1.0)
        if p not in lexical:
            part *= eta
        scores[p] = lexical.get(p, 0.0) + part
    nonexact = [x for x in lex if not x[2]]
    if rho > 0 and nonexact:
        top = nonexact[0]
        second = nonexact[1][1] if len(nonexact) > 1 else 0.0
        if second < rho * top[1]:
            t = top[0]
            ranked = order({p: v for p, v in scores.items() if v > 0 or p in exact}, exact)
            if t in sim and t in ranked:
                # Those fused above the winner that are not `delta` more
                # similar move below it, in their order.
                at = ranked.index(t)
                above = [p for p in ranked[:at] if p in exact or sim.get(p, -1) >= sim[t] + delta]
                below = [p for p in ranked[:at] if p not in above]
                ranked = above + [t] + below + ranked[at + 1 :]
                return keep_strong(ranked, lex, lexical, a)
    return keep_strong(order({p: v for p, v in scores.items() if v > 0 or p in exact}, exact), lex, lexical, a)


def keep_strong(ranked, lex, lexical, a):
    theta, keep = a.get("theta", 2.0), a.get("keep", 5)
    # A strong lexical match among the words' first `keep` stays in the first `keep`.
    for i, (p, s, e, _) in enumerate(lex[:keep]):
        if e or lexical[p] < theta:
            continue
        at = ranked.index(p) if p in ranked else len(ranked)
        if at >= keep:
            if p in ranked:
                ranked.remove(p)
            ranked.insert(keep - 1, p)
    return ranked


RULES = {
    "words": (words, {}),
    "meaning": (meaning, {}),
    # `src/rank/fuse.rs` as it is: the 0.03 band and the clear-winner rule.
    "mem": (guarded, {"w": 1.0, "spread": 0.03, "rho": 0.7, "delta": 0.03}),
    "band 0.03 alone": (guarded, {"w": 1.0, "spread": 0.03}),
    # The rule before: a 0.05 band.
    "band 0.05 alone": (current, {}),
}
for k in (10, 30, 60):
    RULES[f"rrf k={k}"] = (rrf, {"k": k})
for alpha in (0.3, 0.5, 0.7):
    for lo in (0.7, 0.75, 0.8):
        RULES[f"convex a={alpha} lo={lo}"] = (convex, {"alpha": alpha, "lo": lo, "hi": 0.95})
for w in (0.5, 1.0):
    RULES[f"zscore w={w}"] = (zscore, {"w": w})


def metrics(ranked, relevant):
    rel = set(relevant)
    r5 = len([p for p in ranked[:5] if p in rel]) / max(len(rel), 1)
    mrr = next((1 / (i + 1) for i, p in enumerate(ranked[:10]) if p in rel), 0.0)
    return r5, mrr


def main():
    sets, only = [], []
    args = sys.argv[1:]
    while args:
        a = args.pop(0)
        if a == "--rule":
            only.append(args.pop(0))
        else:
            name, path = a.split("=", 1)
            sets.append((name, load(path)))
    rules = {k: v for k, v in RULES.items() if not only or k in only or k in ("words", "meaning")}
    groups = []
    for name, qs in sets:
        by = defaultdict(list)
        for q in qs:
            by[f"{name}:{q.get('type') or 'all'}"].append(q)
        by[f"{name}:all"] = qs
        groups.extend(sorted(by.items()))
    print("| rule | worst drop vs words | " + " | ".join(f"{g} ({len(qs)})" for g, qs in groups) + " |")
    base = {}
    for rule, (fn, a) in rules.items():
        cells, worst = [], 0.0
        for g, qs in groups:
            r5 = mrr = 0.0
            for q in qs:
                x, y = metrics(fn(q, a), q["relevant"])
                r5 += x
                mrr += y
            r5, mrr = r5 / len(qs), mrr / len(qs)
            if rule == "words":
                base[g] = (r5, mrr)
            worst = min(worst, r5 - base[g][0], mrr - base[g][1])
            cells.append(f"{r5:.3f}/{mrr:.3f}")
        print(f"| {rule} | {worst:+.3f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
