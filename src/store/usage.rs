//! Each memory's use as of now: its last hit from its root's `.state.json`
//! with its own `updated`, and since when that root has recorded use, made
//! into a [`Usage`] (tier, relevance in effect). Read once per command; the
//! memory files are never touched.

use std::sync::Arc;

use crate::model::memory::Memory;
use crate::model::roots::{Root, Scope};
use crate::model::usage::Usage;
use crate::store::state::{self, Hits, State};

/// One root's hit records and since when it has kept them.
#[derive(Debug, Clone)]
struct Recorded {
    scope: Scope,
    state: Arc<State>,
    /// Epoch ms use began being recorded (now, when it has not).
    since: i64,
}

/// The hit records of the roots a command reads, and the time it runs at.
#[derive(Debug, Clone, Default)]
pub struct Uses {
    roots: Vec<Recorded>,
    pub now_ms: i64,
}

impl Uses {
    /// The hit records of `roots` (a root whose state cannot be read counts
    /// no hits and has recorded nothing yet: it is derived data).
    pub fn load(roots: &[&Root], now_ms: i64) -> Uses {
        let roots = roots
            .iter()
            .map(|r| {
                let state = state::load_shared(&r.dir).0;
                let since = state.began().unwrap_or(now_ms);
                Recorded { scope: r.scope, state, since }
            })
            .collect();
        Uses { roots, now_ms }
    }

    /// From states already read.
    pub fn from_states(states: &[(Scope, Arc<State>)], now_ms: i64) -> Uses {
        let roots = states
            .iter()
            .map(|(scope, st)| Recorded {
                scope: *scope,
                state: Arc::clone(st),
                since: st.began().unwrap_or(now_ms),
            })
            .collect();
        Uses { roots, now_ms }
    }

    fn root(&self, m: &Memory) -> Option<&Recorded> {
        self.roots.iter().find(|r| r.scope == m.scope)
    }

    /// The hit record of `m` (none: zero).
    pub fn hits(&self, m: &Memory) -> Hits {
        self.root(m).and_then(|r| r.state.hits.get(&m.file()).copied()).unwrap_or_default()
    }

    /// Since when `m`'s root has recorded use (now, when it has not).
    pub fn since(&self, m: &Memory) -> i64 {
        self.root(m).map_or(self.now_ms, |r| r.since)
    }

    /// The use of `m` now.
    pub fn of(&self, m: &Memory) -> Usage {
        usage(m, self.hits(m).last, self.since(m), self.now_ms)
    }
}

/// The use of `m` at `now_ms`, last hit at `last_hit` (0: never), in a root
/// that has recorded use since `watched`.
pub fn usage(m: &Memory, last_hit: i64, watched: i64, now_ms: i64) -> Usage {
    Usage::at(m.relevance, m.updated, last_hit, watched, m.pinned || m.is_rule(), now_ms)
}
