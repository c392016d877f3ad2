//! Labelled queries and the figures computed from them, shared by
//! `examples/eval.rs` and the dev set's floor in `tests/ranking.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;

/// One line of a set's `queries.jsonl`.
#[derive(Deserialize)]
pub struct Query {
    #[serde(default)]
    pub id: String,
    pub query: String,
    /// Every path with a grade of at least 1.
    pub relevant: Vec<String>,
    #[serde(default)]
    pub lang: String,
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// 2 the answer, 1 partly useful; absent, every relevant path is 1.
    #[serde(default)]
    pub grades: BTreeMap<String, u32>,
    #[serde(default)]
    pub scope: Option<String>,
}

impl Query {
    /// A path's gain for nDCG: 2^grade − 1.
    fn gain(&self, path: &str) -> f64 {
        let relevant = self.relevant.iter().any(|p| p == path);
        let grade = self.grades.get(path).copied().unwrap_or(u32::from(relevant));
        2f64.powi(grade.min(16) as i32) - 1.0
    }
}

/// Every query of a `queries.jsonl`.
pub fn load_queries(path: &Path) -> Vec<Query> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .collect()
}

/// Totals over some queries.
#[derive(Default, Clone, Copy)]
pub struct Sums {
    pub n: usize,
    r5: f64,
    r10: f64,
    mrr: f64,
    ndcg: f64,
    empty: usize,
}

impl Sums {
    /// Count one query, given the paths ranked for it, best first.
    pub fn add(&mut self, ranked: &[String], q: &Query) {
        let rel = |p: &String| q.relevant.contains(p);
        let found = |k: usize| ranked.iter().take(k).filter(|p| rel(p)).count() as f64;
        let total = q.relevant.len().max(1) as f64;
        self.n += 1;
        self.r5 += found(5) / total;
        self.r10 += found(10) / total;
        self.mrr += ranked.iter().take(10).position(rel).map_or(0.0, |i| 1.0 / (i + 1) as f64);
        let discount = |i: usize| 1.0 / ((i + 2) as f64).log2();
        let dcg: f64 =
            ranked.iter().take(10).enumerate().map(|(i, p)| q.gain(p) * discount(i)).sum();
        let judged: BTreeSet<&String> = q.relevant.iter().chain(q.grades.keys()).collect();
        let mut best: Vec<f64> = judged.into_iter().map(|p| q.gain(p)).collect();
        best.sort_by(|a, b| b.total_cmp(a));
        let ideal: f64 = best.iter().take(10).enumerate().map(|(i, g)| g * discount(i)).sum();
        self.ndcg += if ideal > 0.0 { dcg / ideal } else { 0.0 };
        self.empty += ranked.is_empty() as usize;
    }

    /// Means: R@5, R@10, MRR@10, nDCG@10 and the share with no result.
    pub fn means(&self) -> [f64; 5] {
        let n = self.n.max(1) as f64;
        [self.r5, self.r10, self.mrr, self.ndcg, self.empty as f64].map(|v| v / n)
    }
}

/// Sums per language, per type and overall.
#[derive(Default)]
pub struct Table {
    pub all: Sums,
    pub by_lang: BTreeMap<String, Sums>,
    pub by_type: BTreeMap<String, Sums>,
}

impl Table {
    pub fn add(&mut self, ranked: &[String], q: &Query) {
        self.all.add(ranked, q);
        self.by_lang.entry(q.lang.clone()).or_default().add(ranked, q);
        if let Some(kind) = &q.kind {
            self.by_type.entry(kind.clone()).or_default().add(ranked, q);
        }
    }

    /// Markdown rows for `set`: languages when there are several, types
    /// whenever the queries give them, then all.
    pub fn rows(&self, set: &str) -> Vec<String> {
        let langs = self.by_lang.iter().filter(|_| self.by_lang.len() > 1);
        let all = [("all".to_string(), self.all)];
        let row = |(slice, sums): (&String, &Sums)| {
            let cells = sums.means().map(|v| format!("{v:.3}")).join(" | ");
            format!("| {set} | {slice} | {} | {cells} |", sums.n)
        };
        langs.chain(&self.by_type).chain(all.iter().map(|(s, v)| (s, v))).map(row).collect()
    }
}
