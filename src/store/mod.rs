//! The files under a root: [`files`] is the one way one is opened (regular
//! files only, links only within the root, every read bounded); [`scan`]
//! lists a root and reads its memories; [`identity`] tells an open file
//! from its replacement without reading it; [`write`](mod@write) changes files
//! (atomically, through open folders, under the root's write lock);
//! [`state`] keeps hit counts (and [`usage`] makes them each memory's tier
//! and relevance in effect), [`session`] what an agent's session was
//! shown, and [`trust`] what the user trusted of a project root.

pub mod files;
pub mod gitignore;
pub mod identity;
pub mod pending;
pub mod scan;
pub mod session;
pub mod state;
pub mod trust;
pub mod usage;
pub mod write;
