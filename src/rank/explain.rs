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
    /// With the semantic tier: how the score above was fused with meaning.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fused: Option<FusedPart>,
}

/// A score fused from words and meaning (see [`crate::rank::fuse`]).
#[derive(Debug, Clone, Serialize)]
pub struct FusedPart {
    /// What the result ranked by: `words + meaning`.
    pub score: f32,
    /// The lexical score over the query's best lexical score.
    pub words: f32,
    /// The semantic part.
    pub meaning: f32,
    /// The cosine similarity of the memory's vector to the query's.
    pub similarity: Option<f32>,
    /// Its place in the words' order (1 = first), and in the fused order.
    pub words_rank: Option<usize>,
    pub rank: usize,
    /// An exact hit, placed first whatever the meaning says.
    pub exact: bool,
    /// Why a clear lexical winner kept its place, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held: Option<String>,
    /// Why it was lifted toward the first result, when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub related: Option<String>,
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
        if let Some(u) = &self.fused {
            let similarity =
                u.similarity.map_or("no vector".to_string(), |s| format!("similarity {s:.3}"));
            let lifted = u.score - u.words - u.meaning;
            let tags =
                if u.related.is_some() { format!(" + tags {lifted:.3}") } else { String::new() };
            writeln!(
                f,
                "fused {:.3} = words {:.3} + meaning {:.3}{tags} ({similarity})",
                u.score, u.words, u.meaning
            )?;
            let moved = match u.words_rank {
                _ if u.exact => {
                    "an exact hit (a trigger, or every word of a short query) comes first"
                }
                None if u.related.is_some() => "no word matched: placed by its meaning and tags",
                None => "no word matched: placed by its meaning alone",
                Some(w) if w > u.rank => "moved up by its meaning",
                Some(w) if w < u.rank => {
                    "moved down: passed by memories nearer in meaning or exact hits"
                }
                Some(_) => "where the words put it",
            };
            let words = u.words_rank.map_or("-".to_string(), |w| format!("#{w}"));
            writeln!(f, "  words {words} -> fused #{}: {moved}", u.rank)?;
            for why in [&u.held, &u.related].into_iter().flatten() {
                writeln!(f, "  {why}")?;
            }
            if self.terms.is_empty() && self.trigger.is_none() {
                return Ok(());
            }
        }
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
