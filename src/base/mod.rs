//! Building blocks that know nothing of memories: errors, the binary codec
//! of derived files, time, safe text, credentials in text, parallel fan-out,
//! the progress line and a hook's bounded standard input. Everything else in the crate stands on these; they depend on
//! nothing in it.

pub mod codec;
pub mod error;
pub mod parallel;
pub mod progress;
pub mod secrets;
pub mod stdin;
pub mod text;
pub mod time;
pub mod zone;
