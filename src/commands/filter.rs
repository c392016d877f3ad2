//! The filter flags every command that picks memories shares (`list`,
//! `recall`, `export`, `clean`, `stats`): one name and one meaning each.
//! They parse into [`crate::ops::filter::Filter`], which does the picking.

use clap::builder::{PossibleValuesParser, TypedValueParser};

use crate::model::usage::{Relevance, Tier};

/// `--category`, `--kind`, `--tag`, `--role`, `--min-relevance`, `--tier`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Filter {
    /// Only this category
    #[arg(long, short, add = clap_complete::engine::ArgValueCompleter::new(crate::commands::complete::categories))]
    pub category: Option<String>,
    /// Only this kind (fact, rule, decision, …)
    #[arg(long, short)]
    pub kind: Option<String>,
    /// Only memories with this tag (case does not matter)
    #[arg(long, short)]
    pub tag: Option<String>,
    /// As this agent role sees them: shared memories and the role's own
    /// (`role:` in the frontmatter); other roles' are left out
    #[arg(long, short)]
    pub role: Option<String>,
    /// Only memories whose relevance in effect is at least this: the level
    /// they declare, one step lower per 30 days without use (`clean`: the
    /// candidates are the memories below it)
    #[arg(long, value_name = "LEVEL", value_parser = relevance_parser())]
    pub min_relevance: Option<Relevance>,
    /// Only memories used (recalled, else updated) this recently: hot
    /// within 7 days, warm 8 to 30, cool longer ago
    #[arg(long, value_name = "TIER", value_parser = tier_parser())]
    pub tier: Option<Tier>,
}

/// `high`, `medium` or `low` on the command line.
pub fn relevance_parser() -> impl TypedValueParser<Value = Relevance> {
    PossibleValuesParser::new(Relevance::ALL.map(Relevance::name))
        .map(|s| s.parse::<Relevance>().unwrap_or_default())
}

/// `hot`, `warm` or `cool` on the command line.
pub fn tier_parser() -> impl TypedValueParser<Value = Tier> {
    PossibleValuesParser::new(Tier::ALL.map(Tier::name))
        .map(|s| s.parse::<Tier>().unwrap_or(Tier::Hot))
}

impl Filter {
    /// The criteria given, for the engine.
    pub fn criteria(&self) -> crate::ops::filter::Filter {
        crate::ops::filter::Filter {
            category: self.category.clone(),
            kind: self.kind.clone(),
            tag: self.tag.clone(),
            role: self.role.clone(),
            min_relevance: self.min_relevance,
            tier: self.tier,
        }
    }
}
