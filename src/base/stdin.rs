//! A hook's input: the JSON an agent host writes to a hook's standard
//! input, read whole but bounded, so a host that sends too much costs at
//! most [`MAX_HOOK_STDIN`].

use crate::base::error::{Error, Result};

/// The most a hook reads from standard input.
pub const MAX_HOOK_STDIN: u64 = 16 << 20;

/// Standard input, whole; an error past [`MAX_HOOK_STDIN`].
pub fn read_hook_stdin() -> Result<Vec<u8>> {
    read_bounded(std::io::stdin(), MAX_HOOK_STDIN)
}

fn read_bounded(input: impl std::io::Read, max: u64) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut input.take(max + 1), &mut bytes)
        .map_err(|e| Error::input(format!("cannot read stdin: {e}")))?;
    if bytes.len() as u64 > max {
        return Err(Error::input("stdin is over 16 MiB; a hook's JSON is smaller"));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_up_to_the_limit_is_read_and_past_it_refused() {
        assert_eq!(read_bounded(&b"abcd"[..], 4).unwrap(), b"abcd");
        let err = read_bounded(&b"abcde"[..], 4).unwrap_err();
        assert!(err.to_string().contains("over 16 MiB"), "{err}");
    }
}
