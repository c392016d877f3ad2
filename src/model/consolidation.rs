//! What `mem consolidate --hook` keeps between an agent's turns, in a
//! root's `.state.json`: whether consolidation is on for this clone (and
//! every how many turns), and per agent session the turns counted and
//! whether consolidation was already asked for.
//!
//! Bounded: at most [`MAX_SESSIONS`] sessions, and a session untouched for
//! [`EXPIRES_MS`] is dropped by the next count.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The turns between two consolidations unless told otherwise.
pub const DEFAULT_EVERY: u32 = 3;
/// Sessions counted per root; the least recently seen go first.
pub const MAX_SESSIONS: usize = 128;
/// A session unseen this long is dropped (7 days).
pub const EXPIRES_MS: i64 = 7 * crate::base::time::DAY_MS;

/// The consolidation part of a root's state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Consolidation {
    /// On for this clone, every this many turns (`mem consolidate
    /// --enable`); absent: off unless `$MEM_CONSOLIDATE` turns it on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<u32>,
    /// Per session id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sessions: BTreeMap<String, Turns>,
}

/// One session's count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turns {
    /// Turns ended (end-of-turn hooks not caused by a hook).
    pub turns: u32,
    /// Epoch ms of the last turn counted.
    pub at: i64,
    /// Epoch ms consolidation was asked for; it is asked once per session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked: Option<i64>,
}

impl Consolidation {
    /// Nothing to keep.
    pub fn is_empty(&self) -> bool {
        self.every.is_none() && self.sessions.is_empty()
    }

    /// Count one more turn of session `id` at `now_ms`; returns its count.
    pub fn count(&mut self, id: &str, now_ms: i64) -> Turns {
        self.prune(now_ms);
        let turns = self.sessions.entry(id.to_string()).or_default();
        turns.turns = turns.turns.saturating_add(1);
        turns.at = now_ms;
        let counted = *turns;
        self.bound(id);
        counted
    }

    /// Mark consolidation asked for in session `id`; false when it already
    /// was (another hook got there first).
    pub fn ask(&mut self, id: &str, now_ms: i64) -> bool {
        let turns = self.sessions.entry(id.to_string()).or_default();
        if turns.asked.is_some() {
            return false;
        }
        turns.asked = Some(now_ms);
        turns.at = turns.at.max(now_ms);
        self.bound(id);
        true
    }

    fn prune(&mut self, now_ms: i64) {
        self.sessions.retain(|_, t| now_ms.saturating_sub(t.at) <= EXPIRES_MS);
    }

    /// At most [`MAX_SESSIONS`], `keep` among them.
    fn bound(&mut self, keep: &str) {
        while self.sessions.len() > MAX_SESSIONS {
            let oldest = self
                .sessions
                .iter()
                .filter(|(id, _)| id.as_str() != keep)
                .min_by_key(|(id, t)| (t.at, (*id).clone()))
                .map(|(id, _)| id.clone());
            match oldest {
                Some(id) => self.sessions.remove(&id),
                None => break,
            };
        }
    }
}

/// Whether the turn counted is one consolidation is due at: every
/// `every` turns, never asked before in this session.
pub fn due(turns: Turns, every: u32) -> bool {
    turns.asked.is_none() && turns.turns > 0 && turns.turns.is_multiple_of(every.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_third_turn_once_per_session() {
        let mut c = Consolidation::default();
        let due_at: Vec<bool> = (1..=4).map(|t| due(c.count("s", t), 3)).collect();
        assert_eq!(due_at, [false, false, true, false]);
        assert!(c.ask("s", 5) && !c.ask("s", 6));
        let later: Vec<bool> = (7..=12).map(|t| due(c.count("s", t), 3)).collect();
        assert!(later.iter().all(|d| !d), "asked once per session");
        assert!(due(c.count("other", 13), 1));
    }

    #[test]
    fn sessions_are_bounded_and_expire() {
        let mut c = Consolidation::default();
        for i in 0..MAX_SESSIONS + 5 {
            c.count(&format!("s{i}"), i as i64);
        }
        assert_eq!(c.sessions.len(), MAX_SESSIONS);
        assert!(!c.sessions.contains_key("s0") && c.sessions.contains_key("s132"));
        c.count("late", 200 + EXPIRES_MS);
        assert_eq!(c.sessions.len(), 1);
        assert!(Consolidation::default().is_empty());
    }
}
