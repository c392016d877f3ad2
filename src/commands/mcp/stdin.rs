//! The server's input: stdin read line by line on a thread of its own, each
//! line handed on whole. A line over the transport's limit is not dropped
//! unanswered: it is replaced by a request that the server answers with a
//! JSON-RPC error for the same id (read from the line as it streams past),
//! or, when no id can be read, by a line the transport answers with an
//! error, which [`Replies`] gives its `"id": null`. The next line is
//! served as usual.

use std::io::{BufRead, BufReader, Read};
use std::pin::Pin;
use std::task::{Context, Poll};

use rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;

/// The method of the request that stands for a line over the limit.
pub(super) const OVERSIZED: &str = "mem/oversized-request";

/// The longest line handed on, its newline included: the transport's own
/// limit, so every line handed on is read.
pub(super) const MAX_LINE: usize = DEFAULT_MAX_LINE_LENGTH;

/// Lines of stdin as an async reader, read on a thread of its own.
pub(super) struct Lines {
    rx: mpsc::Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    at: usize,
}

impl Lines {
    /// Start reading stdin.
    pub(super) fn stdin() -> Lines {
        Lines::spawn(std::io::stdin(), MAX_LINE)
    }

    fn spawn<R: Read + Send + 'static>(input: R, max: usize) -> Lines {
        let (tx, rx) = mpsc::channel(4);
        std::thread::spawn(move || pump(BufReader::with_capacity(1 << 16, input), &tx, max));
        Lines { rx, chunk: Vec::new(), at: 0 }
    }
}

impl AsyncRead for Lines {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        loop {
            let this = &mut *self;
            if this.at < this.chunk.len() {
                let n = buf.remaining().min(this.chunk.len() - this.at);
                buf.put_slice(&this.chunk[this.at..this.at + n]);
                this.at += n;
                return Poll::Ready(Ok(()));
            }
            match this.rx.poll_recv(cx) {
                Poll::Ready(Some(chunk)) => (this.chunk, this.at) = (chunk, 0),
                // End of input: a read of nothing.
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

/// stdout, where an error reply the transport writes with no id (to a line
/// whose id could not be read) gets `"id": null`, as JSON-RPC requires.
pub(super) struct Replies<W> {
    out: W,
    /// The reply being written, up to its newline.
    line: Vec<u8>,
    /// Whole replies not yet written out.
    ready: Vec<u8>,
}

impl Replies<tokio::io::Stdout> {
    pub(super) fn stdout() -> Self {
        Replies { out: tokio::io::stdout(), line: Vec::new(), ready: Vec::new() }
    }
}

/// How the transport starts an error reply with no id.
const NO_ID: &[u8] = br#"{"jsonrpc":"2.0","error":"#;

impl<W: AsyncWrite + Unpin> Replies<W> {
    /// Write out what is ready.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        while !self.ready.is_empty() {
            match Pin::new(&mut self.out).poll_write(cx, &self.ready) {
                Poll::Ready(Ok(0)) => {
                    return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
                }
                Poll::Ready(Ok(n)) => drop(self.ready.drain(..n)),
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for Replies<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        // Bounded: a reader that stops reading stops the writer too.
        if this.ready.len() >= 1 << 16 && this.drain(cx)?.is_pending() {
            return Poll::Pending;
        }
        for &b in buf {
            this.line.push(b);
            if b == b'\n' {
                if this.line.starts_with(NO_ID) {
                    this.ready.extend_from_slice(br#"{"jsonrpc":"2.0","id":null,"error":"#);
                    this.ready.extend_from_slice(&this.line[NO_ID.len()..]);
                } else {
                    this.ready.append(&mut this.line);
                }
                this.line.clear();
            }
        }
        // Whatever the drain gives now; the rest goes at the flush.
        let _ = this.drain(cx)?;
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        if this.drain(cx)?.is_pending() {
            return Poll::Pending;
        }
        Pin::new(&mut this.out).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        this.ready.append(&mut this.line);
        if this.drain(cx)?.is_pending() {
            return Poll::Pending;
        }
        Pin::new(&mut this.out).poll_shutdown(cx)
    }
}

/// Read `input` to its end, sending each line whole, and for a line over
/// `max` bytes the line that stands for it.
fn pump(mut input: impl BufRead, tx: &mpsc::Sender<Vec<u8>>, max: usize) {
    let mut line = Vec::new();
    let mut over: Option<IdScan> = None;
    loop {
        let buf = match input.fill_buf() {
            Ok([]) => break,
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                tracing::error!("cannot read stdin: {e}");
                break;
            }
        };
        let newline = buf.iter().position(|&b| b == b'\n');
        let take = newline.map_or(buf.len(), |i| i + 1);
        match &mut over {
            Some(scan) => scan.feed(&buf[..take]),
            None if line.len() + take > max => {
                let mut scan = IdScan::default();
                scan.feed(&line);
                scan.feed(&buf[..take]);
                line = Vec::new();
                over = Some(scan);
            }
            None => line.extend_from_slice(&buf[..take]),
        }
        input.consume(take);
        if newline.is_none() {
            continue;
        }
        let out = match over.take() {
            Some(scan) => stand_in(&scan, max),
            None => std::mem::take(&mut line),
        };
        if tx.blocking_send(out).is_err() {
            return;
        }
    }
    if let Some(scan) = over {
        tracing::error!("the last line of input, {} bytes, ended without a newline", scan.bytes);
    } else if !line.is_empty() {
        let _ = tx.blocking_send(line);
    }
}

/// The line handed on for one over the limit.
fn stand_in(scan: &IdScan, max: usize) -> Vec<u8> {
    let bytes = scan.bytes;
    tracing::error!(
        "a request line of {bytes} bytes is over the {max}-byte limit; answered with an error"
    );
    let line = match scan.id() {
        Some(id) => serde_json::json!({
            "jsonrpc": "2.0", "id": id, "method": OVERSIZED,
            "params": {"bytes": bytes, "limit": max}
        }),
        // Valid JSON, not a message: the transport answers "Invalid request", id null.
        None => serde_json::json!({"jsonrpc": "2.0", "oversized": bytes}),
    };
    let mut out = line.to_string().into_bytes();
    out.push(b'\n');
    out
}

/// Finds the top-level `"id"` of a JSON object streaming past, in one pass
/// and little memory.
#[derive(Debug, Default)]
struct IdScan {
    bytes: usize,
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The next string at the top level is a key.
    expect_key: bool,
    /// The top-level key being read (its first bytes).
    key: Option<Vec<u8>>,
    last_key_is_id: bool,
    /// The id's value being read, as raw JSON.
    value: Option<Vec<u8>>,
    found: Option<Vec<u8>>,
}

/// The longest id read: a request id is a number or a short string.
const MAX_ID: usize = 256;

impl IdScan {
    fn feed(&mut self, bytes: &[u8]) {
        self.bytes += bytes.len();
        for &b in bytes {
            self.step(b);
        }
    }

    fn step(&mut self, b: u8) {
        if self.value.is_some() && self.read_value(b) {
            return;
        }
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if let Some(key) = self.key.take() {
                    self.last_key_is_id = key == b"id";
                }
            } else if let Some(key) = &mut self.key
                && key.len() < 3
            {
                key.push(b);
            }
            return;
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.expect_key {
                    self.key = Some(Vec::new());
                }
            }
            b'{' | b'[' => {
                self.depth += 1;
                self.expect_key = self.depth == 1 && b == b'{';
            }
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            b',' if self.depth == 1 => self.expect_key = true,
            b':' if self.depth == 1 => {
                self.expect_key = false;
                if std::mem::take(&mut self.last_key_is_id) && self.found.is_none() {
                    self.value = Some(Vec::new());
                }
            }
            _ => {}
        }
    }

    /// One byte of the id's value; `true` when it was taken as the value's,
    /// `false` when the scan goes on with it.
    fn read_value(&mut self, b: u8) -> bool {
        let Some(value) = &mut self.value else { return false };
        if value.len() >= MAX_ID {
            // Not an id anyone sends: given up, and the scan goes on.
            self.value = None;
            return false;
        }
        match value.first() {
            None if b.is_ascii_whitespace() => {}
            None => {
                value.push(b);
                self.in_string = b == b'"';
            }
            Some(b'"') => {
                value.push(b);
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                    self.found = self.value.take();
                }
            }
            Some(_) if b.is_ascii_whitespace() || matches!(b, b',' | b'}' | b']') => {
                self.found = self.value.take();
                return false;
            }
            Some(_) => value.push(b),
        }
        true
    }

    /// The id, when one was read and it is a number or a string.
    fn id(&self) -> Option<serde_json::Value> {
        let raw = self.found.as_ref()?;
        let id: serde_json::Value = serde_json::from_slice(raw).ok()?;
        (id.is_number() || id.is_string()).then_some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id_of(line: &str) -> Option<serde_json::Value> {
        let mut scan = IdScan::default();
        // In pieces, as it streams past.
        for piece in line.as_bytes().chunks(3) {
            scan.feed(piece);
        }
        scan.id()
    }

    #[test]
    fn the_top_level_id_is_read_wherever_it_stands() {
        let pad = "x".repeat(100);
        assert_eq!(id_of(r#"{"jsonrpc":"2.0","id":7,"method":"m"}"#), Some(7.into()));
        assert_eq!(
            id_of(&format!(r#"{{"params":{{"id":1,"t":"{pad}"}},"id" : "a\"b" }}"#)),
            Some("a\"b".into())
        );
        assert_eq!(id_of(r#"{"method":"m","params":{"s":"\"id\":3"},"id":12}"#), Some(12.into()));
        assert_eq!(id_of(r#"{"method":"m","params":{"id":3}}"#), None);
        assert_eq!(id_of(r#"[{"id":3}]"#), None);
        assert_eq!(id_of(r#"{"id":null,"method":"m"}"#), None);
        assert_eq!(id_of(r#"{"id":{"x":1},"method":"m"}"#), None);
        assert_eq!(id_of("not json at all"), None);
    }

    #[test]
    fn a_line_over_the_limit_is_replaced_and_the_next_one_goes_on() {
        let input = format!(
            "{{\"id\":1}}\n{{\"id\":2,\"params\":\"{}\"}}\n{{\"id\":3}}\n",
            "y".repeat(200)
        );
        let (tx, mut rx) = mpsc::channel(8);
        pump(input.as_bytes(), &tx, 64);
        drop(tx);
        let mut lines = Vec::new();
        while let Ok(line) = rx.try_recv() {
            lines.push(String::from_utf8(line).unwrap());
        }
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert_eq!(lines[0], "{\"id\":1}\n");
        let stand_in: serde_json::Value = serde_json::from_str(&lines[1]).unwrap();
        assert_eq!(stand_in["id"], 2);
        assert_eq!(stand_in["method"], OVERSIZED);
        assert_eq!(lines[2], "{\"id\":3}\n");
    }
}
