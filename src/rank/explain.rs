//! Why a memory scored what it did: per term and field, then the trigger
//! bonus and each boost. Built only for the results shown with `--explain`.

use std::fmt::{self, Write as _};

use serde::Serialize;

/// A score taken apart.
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    /// The final score.
    pub score: f32,
    /// The BM25F relevance, the sum of `terms`.
    pub relevance: f32,
    pub terms: Vec<TermPart>,
    pub trigger: Option<TriggerPart>,
    pub boosts: Vec<BoostPart>,
}

/// One query term's share of the relevance.
#[derive(Debug, Clone, Serialize)]
pub struct TermPart {
    pub term: String,
    pub idf: f32,
    pub score: f32,
    /// (field, share of `score`), largest first.
    pub fields: Vec<(&'static str, f32)>,
}

/// A `load_when` trigger found in the query.
#[derive(Debug, Clone, Serialize)]
pub struct TriggerPart {
    pub trigger: String,
    pub score: f32,
}

/// A gentle multiplicative boost, shown as the points it added.
#[derive(Debug, Clone, Serialize)]
pub struct BoostPart {
    pub name: &'static str,
    pub detail: String,
    pub score: f32,
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "score {:.3} = relevance {:.3}", self.score, self.relevance)?;
        for t in &self.terms {
            let mut fields = String::new();
            for (name, s) in &t.fields {
                let _ = write!(fields, " {name} {s:.3}");
            }
            writeln!(f, "  term {:<12} {:.3} (idf {:.2}:{fields})", t.term, t.score, t.idf)?;
        }
        if let Some(t) = &self.trigger {
            writeln!(f, "  + trigger \"{}\" {:.3}", t.trigger, t.score)?;
        }
        for b in &self.boosts {
            writeln!(f, "  + {} {:.3} ({})", b.name, b.score, b.detail)?;
        }
        Ok(())
    }
}
