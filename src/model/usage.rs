//! How much a memory matters now: its declared `relevance:` and the level
//! in effect after time without use, and its tier (hot, warm, cool) by the
//! days since it was last used. Derived at read time from the memory's
//! `updated` and the last hit `.state.json` keeps: nothing here is ever
//! written back, so time passing never rewrites a file.
//!
//! A memory's last use is the later of its last hit (a recall, a match
//! `mem context` gave an agent) and its last update; its tier goes by the
//! whole days since then: hot within 7, warm 8 to 30, cool after.
//!
//! Decay counts the days it went unused while use was being recorded: from
//! the later of its last use and the day its root's `.state.json` began
//! recording (mem cannot tell whether a memory was used before it watched,
//! so a fresh clone, or a deleted `.state.json`, starts the count again).
//! More than 30 such days drops one step (high → medium → low), more than
//! 60 two, and so on, never below low. Pinned memories and rules keep the
//! level they declare: they are shown at every session start, and a pin
//! must not fade away unseen.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::base::time::DAY_MS;

/// The days without use that cost one relevance step.
pub const DECAY_DAYS: i64 = 30;
/// The most days since last use of a hot memory.
pub const HOT_DAYS: i64 = 7;
/// The most days since last use of a warm memory; older is cool.
pub const WARM_DAYS: i64 = 30;

/// How much a memory matters: `relevance:` in its frontmatter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Relevance {
    Low,
    #[default]
    Medium,
    High,
}

impl Relevance {
    /// The three levels, highest first.
    pub const ALL: [Relevance; 3] = [Relevance::High, Relevance::Medium, Relevance::Low];
    /// What a value must be, for a message.
    pub const VALID: &'static str = "high, medium or low";

    /// The word written in a file: `high`, `medium`, `low`.
    pub fn name(self) -> &'static str {
        match self {
            Relevance::High => "high",
            Relevance::Medium => "medium",
            Relevance::Low => "low",
        }
    }

    /// `steps` levels lower, never below low.
    pub fn lowered(self, steps: i64) -> Relevance {
        let at = self as i64 - steps.max(0);
        match at {
            i64::MIN..=0 => Relevance::Low,
            1 => Relevance::Medium,
            _ => Relevance::High,
        }
    }
}

impl fmt::Display for Relevance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Relevance {
    type Err = String;

    /// `high`, `medium` or `low`, in any case, around any spaces.
    fn from_str(s: &str) -> Result<Relevance, String> {
        let s = s.trim();
        Relevance::ALL
            .into_iter()
            .find(|r| r.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("`{s}` is not a relevance: use {}", Relevance::VALID))
    }
}

/// How recently a memory was used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// Used within the last 7 days.
    Hot,
    /// Used 8 to 30 days ago.
    Warm,
    /// Not used for more than 30 days.
    Cool,
}

impl Tier {
    /// The three tiers, most recent first.
    pub const ALL: [Tier; 3] = [Tier::Hot, Tier::Warm, Tier::Cool];

    /// `hot`, `warm`, `cool`.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Hot => "hot",
            Tier::Warm => "warm",
            Tier::Cool => "cool",
        }
    }

    /// The tier of a memory last used `days` whole days ago.
    pub fn of_days(days: i64) -> Tier {
        if days <= HOT_DAYS {
            Tier::Hot
        } else if days <= WARM_DAYS {
            Tier::Warm
        } else {
            Tier::Cool
        }
    }

    /// Its weight as the recency part of a ranking: 1.0, 0.7, 0.3.
    pub fn weight(self) -> f32 {
        match self {
            Tier::Hot => 1.0,
            Tier::Warm => 0.7,
            Tier::Cool => 0.3,
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Tier {
    type Err = String;

    fn from_str(s: &str) -> Result<Tier, String> {
        let s = s.trim();
        Tier::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("`{s}` is not a tier: use hot, warm or cool"))
    }
}

/// A memory's use, as of one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Usage {
    /// Epoch ms of its last use: its last hit, or its last update if later.
    pub last_used: i64,
    /// Whole days since then (0 for a time still to come).
    #[serde(skip)]
    pub days: i64,
    /// Whole days it went unused while use was recorded (what decay counts).
    #[serde(skip)]
    pub idle_days: i64,
    pub tier: Tier,
    /// The level `relevance:` declares.
    #[serde(skip)]
    pub declared: Relevance,
    /// The level in effect: the declared one, lowered for time without use
    /// (`effective_relevance` in JSON, beside the memory's `relevance`).
    #[serde(rename = "effective_relevance")]
    pub effective: Relevance,
}

impl Usage {
    /// The use at `now_ms` of a memory that declares `declared`, was
    /// updated at `updated` and last hit at `last_hit` (0: never), in a root
    /// that has recorded use since `watched` (`now_ms`: not yet); `keeps`
    /// for a memory that keeps its declared level (pinned, a rule).
    pub fn at(
        declared: Relevance,
        updated: i64,
        last_hit: i64,
        watched: i64,
        keeps: bool,
        now_ms: i64,
    ) -> Usage {
        let last_used = updated.max(last_hit);
        let days_since = |t: i64| now_ms.saturating_sub(t).max(0) / DAY_MS;
        let (days, idle_days) = (days_since(last_used), days_since(last_used.max(watched)));
        let steps = if keeps { 0 } else { (idle_days - 1).max(0) / DECAY_DAYS };
        Usage {
            last_used,
            days,
            idle_days,
            tier: Tier::of_days(days),
            declared,
            effective: declared.lowered(steps),
        }
    }

    /// True when time without use lowered the declared level.
    pub fn decayed(&self) -> bool {
        self.effective < self.declared
    }
}

/// `relevance high`, or `relevance medium (declares high; unused 31 days)`.
pub fn relevance_fact(u: &Usage) -> String {
    match u.decayed() {
        true => {
            format!(
                "relevance {} (declares {}; unused {} days)",
                u.effective, u.declared, u.idle_days
            )
        }
        false => format!("relevance {}", u.effective),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_795_996_800_000;

    fn after(days: i64, declared: Relevance, keeps: bool) -> Usage {
        Usage::at(declared, NOW - days * DAY_MS, 0, 0, keeps, NOW)
    }

    #[test]
    fn one_step_per_thirty_days_without_use_never_below_low() {
        use Relevance::*;
        let effective = |days, declared| after(days, declared, false).effective;
        assert_eq!(
            [0, 8, 30, 31, 60, 61, 400].map(|d| effective(d, High)),
            [High, High, High, Medium, Medium, Low, Low]
        );
        assert_eq!([0, 30, 31, 61].map(|d| effective(d, Medium)), [Medium, Medium, Low, Low]);
        assert_eq!(effective(0, Low), Low);
        assert_eq!(after(400, High, true).effective, High, "pinned and rules keep their level");
        assert!(after(31, High, false).decayed() && !after(30, High, false).decayed());
    }

    #[test]
    fn tiers_by_days_since_last_use() {
        let tier = |days| after(days, Relevance::Medium, false).tier;
        assert_eq!(
            [0, 7, 8, 30, 31, 61].map(tier),
            [Tier::Hot, Tier::Hot, Tier::Warm, Tier::Warm, Tier::Cool, Tier::Cool]
        );
        assert_eq!(Usage::at(Relevance::Low, NOW + DAY_MS, 0, 0, false, NOW).tier, Tier::Hot);
    }

    #[test]
    fn only_days_watched_count_against_a_memory() {
        // Updated 90 days ago, in a root that began recording 10 days ago:
        // cool, but only 10 days seen unused.
        let watched = |days| NOW - days * DAY_MS;
        let used = Usage::at(Relevance::High, NOW - 90 * DAY_MS, 0, watched(10), false, NOW);
        assert_eq!((used.tier, used.effective, used.idle_days), (Tier::Cool, Relevance::High, 10));
        let later = Usage::at(Relevance::High, NOW - 90 * DAY_MS, 0, watched(31), false, NOW);
        assert_eq!(later.effective, Relevance::Medium);
    }

    #[test]
    fn a_hit_after_the_update_is_the_last_use() {
        let used = Usage::at(Relevance::High, NOW - 90 * DAY_MS, NOW - 2 * DAY_MS, 0, false, NOW);
        assert_eq!((used.tier, used.effective, used.days), (Tier::Hot, Relevance::High, 2));
        let updated = Usage::at(Relevance::High, NOW - DAY_MS, NOW - 90 * DAY_MS, 0, false, NOW);
        assert_eq!(updated.last_used, NOW - DAY_MS);
    }

    #[test]
    fn names_read_back() {
        for r in Relevance::ALL {
            assert_eq!(r.name().to_uppercase().parse::<Relevance>(), Ok(r));
        }
        for t in Tier::ALL {
            assert_eq!(t.name().parse::<Tier>(), Ok(t));
        }
        assert!("urgent".parse::<Relevance>().unwrap_err().contains("high, medium or low"));
        assert_eq!([Tier::Hot, Tier::Warm, Tier::Cool].map(Tier::weight), [1.0, 0.7, 0.3]);
    }
}
