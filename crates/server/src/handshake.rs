//! Fixed newstyle negotiation: the greeting, then options until the client
//! picks an export (`NBD_OPT_EXPORT_NAME`, `NBD_OPT_GO`) or leaves
//! (`NBD_OPT_ABORT`, a closed connection).
//!
//! Supported: `EXPORT_NAME`, `ABORT`, `LIST`, `INFO` and `GO` (with
//! `NBD_INFO_EXPORT`, `NBD_INFO_NAME`, `NBD_INFO_DESCRIPTION` and
//! `NBD_INFO_BLOCK_SIZE`: minimum 512, preferred the flash page, maximum
//! [`MAX_PAYLOAD`]), and `STARTTLS` when the server has TLS ([`crate::tls`]):
//! acknowledged once, then the negotiation goes on over TLS with no second
//! greeting; a server that requires TLS answers every other option before it
//! `NBD_REP_ERR_TLS_REQD` (and closes on `EXPORT_NAME`). Without TLS,
//! `STARTTLS` gets `NBD_REP_ERR_POLICY`. Every other option,
//! `NBD_OPT_STRUCTURED_REPLY` among them, is answered `NBD_REP_ERR_UNSUP`:
//! replies are simple replies only.

use std::io::{self, Read, Write};
use std::sync::Arc;

use crate::export::{Export, MAX_PAYLOAD};
use crate::proto::*;

/// Option data longer than this is refused (and skipped): the longest valid
/// option is a GO with a 4 KiB name.
const MAX_OPTION: u32 = 64 << 10;

/// How a negotiation ended.
#[derive(Debug)]
pub(crate) enum Negotiated {
    /// The client entered transmission with this export.
    Export(Arc<Export>),
    /// `STARTTLS` was acknowledged: the TLS handshake comes next, then
    /// [`options`] again over TLS (`no_zeroes` as the client asked in its
    /// flags).
    StartTls { no_zeroes: bool },
    /// The client left (abort or closed connection) or broke the protocol;
    /// `why` says which, for the log.
    Closed { why: String },
}

/// TLS as the negotiation sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TlsState {
    /// The server has no TLS: `STARTTLS` is refused.
    Off,
    /// The server offers TLS; `required`: nothing happens without it.
    Offered { required: bool },
    /// The connection is over TLS now.
    Active,
}

/// Negotiates with one client over `r`/`w` (flushed before every read):
/// the greeting, then [`options`].
pub(crate) fn negotiate(
    r: &mut impl Read,
    w: &mut impl Write,
    exports: &[Arc<Export>],
    tls: TlsState,
) -> io::Result<Negotiated> {
    w.write_all(&NBDMAGIC.to_be_bytes())?;
    w.write_all(&IHAVEOPT.to_be_bytes())?;
    w.write_all(&(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES).to_be_bytes())?;
    w.flush()?;
    let client = read_u32(r)?;
    if client & !(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES) != 0 {
        return Ok(Negotiated::Closed { why: format!("unknown client flags {client:#x}") });
    }
    // Without fixed newstyle a client cannot upgrade: the protocol's NOTLS
    // mode, which a server that requires TLS cannot serve.
    let tls = match tls {
        TlsState::Offered { required: true } if client & FLAG_C_FIXED_NEWSTYLE == 0 => {
            return Ok(Negotiated::Closed {
                why: "the client did not take fixed newstyle, so cannot start the TLS this server requires".into(),
            })
        }
        TlsState::Offered { .. } if client & FLAG_C_FIXED_NEWSTYLE == 0 => TlsState::Off,
        t => t,
    };
    options(r, w, exports, tls, client & FLAG_C_NO_ZEROES != 0)
}

/// Options until the client picks an export, leaves, or upgrades to TLS;
/// `exports` are the server's, the first of them the default (the empty
/// name).
pub(crate) fn options(
    r: &mut impl Read,
    w: &mut impl Write,
    exports: &[Arc<Export>],
    tls: TlsState,
    no_zeroes: bool,
) -> io::Result<Negotiated> {
    let required = tls == TlsState::Offered { required: true };
    loop {
        w.flush()?;
        let magic = match read_u64(r) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                return Ok(Negotiated::Closed { why: "closed during negotiation".into() })
            }
            Err(e) => return Err(e),
        };
        if magic != IHAVEOPT {
            return Ok(Negotiated::Closed { why: format!("option magic {magic:#x}, expected IHAVEOPT") });
        }
        let option = read_u32(r)?;
        let len = read_u32(r)?;
        if len > MAX_OPTION {
            io::copy(&mut r.take(u64::from(len)), &mut io::sink())?;
            let msg = format!("option data of {len} bytes is over the {MAX_OPTION}-byte limit");
            write_option_reply(w, option, REP_ERR_TOO_BIG, msg.as_bytes())?;
            continue;
        }
        let mut data = vec![0u8; len as usize];
        r.read_exact(&mut data)?;
        match option {
            OPT_STARTTLS if !data.is_empty() => {
                write_option_reply(w, option, REP_ERR_INVALID, b"NBD_OPT_STARTTLS takes no data")?;
            }
            OPT_STARTTLS => match tls {
                TlsState::Off => {
                    let msg = b"this server has no TLS credentials (ftlab serve --tls-certificates DIR)";
                    write_option_reply(w, option, REP_ERR_POLICY, msg)?;
                }
                TlsState::Active => write_option_reply(w, option, REP_ERR_INVALID, b"TLS is already on")?,
                TlsState::Offered { .. } => {
                    write_option_reply(w, option, REP_ACK, &[])?;
                    w.flush()?;
                    return Ok(Negotiated::StartTls { no_zeroes });
                }
            },
            OPT_EXPORT_NAME if required => {
                // It cannot be refused with an error: the session ends.
                return Ok(Negotiated::Closed { why: "NBD_OPT_EXPORT_NAME without TLS, which is required".into() });
            }
            OPT_ABORT => {
                // The client may already be gone.
                let _ = write_option_reply(w, option, REP_ACK, &[]).and_then(|()| w.flush());
                return Ok(Negotiated::Closed { why: "NBD_OPT_ABORT".into() });
            }
            _ if required => {
                let msg = b"this server requires TLS: send NBD_OPT_STARTTLS first";
                write_option_reply(w, option, REP_ERR_TLS_REQD, msg)?;
            }
            OPT_EXPORT_NAME => {
                let name = String::from_utf8_lossy(&data);
                let Some(export) = find(exports, &name) else {
                    // No error reply exists for EXPORT_NAME: the session ends.
                    return Ok(Negotiated::Closed {
                        why: format!("NBD_OPT_EXPORT_NAME of unknown export `{}`", for_log(&name)),
                    });
                };
                w.write_all(&export.size().to_be_bytes())?;
                w.write_all(&export.transmission_flags().to_be_bytes())?;
                if !no_zeroes {
                    w.write_all(&[0u8; 124])?;
                }
                w.flush()?;
                return Ok(Negotiated::Export(export.clone()));
            }
            OPT_LIST if !data.is_empty() => {
                write_option_reply(w, option, REP_ERR_INVALID, b"NBD_OPT_LIST takes no data")?;
            }
            OPT_LIST => {
                for e in exports {
                    let mut body = Vec::new();
                    body.extend_from_slice(&(e.name().len() as u32).to_be_bytes());
                    body.extend_from_slice(e.name().as_bytes());
                    body.extend_from_slice(e.description().as_bytes());
                    write_option_reply(w, option, REP_SERVER, &body)?;
                }
                write_option_reply(w, option, REP_ACK, &[])?;
            }
            OPT_INFO | OPT_GO => match info_request(&data) {
                Err(msg) => write_option_reply(w, option, REP_ERR_INVALID, msg.as_bytes())?,
                Ok((name, wanted)) => match find(exports, &name) {
                    None => {
                        let known: Vec<&str> = exports.iter().map(|e| e.name()).collect();
                        let msg = format!("no export named `{name}`; this server has: {}", known.join(", "));
                        write_option_reply(w, option, REP_ERR_UNKNOWN, msg.as_bytes())?;
                    }
                    Some(export) => {
                        send_info(w, option, export, &wanted)?;
                        write_option_reply(w, option, REP_ACK, &[])?;
                        if option == OPT_GO {
                            w.flush()?;
                            return Ok(Negotiated::Export(export.clone()));
                        }
                    }
                },
            },
            _ => {
                let msg = format!("option {option} is not supported by ftlab serve (simple replies only)");
                write_option_reply(w, option, REP_ERR_UNSUP, msg.as_bytes())?;
            }
        }
    }
}

/// The export `name` names; the empty name is the first (default) export.
fn find<'a>(exports: &'a [Arc<Export>], name: &str) -> Option<&'a Arc<Export>> {
    if name.is_empty() {
        return exports.first();
    }
    exports.iter().find(|e| e.name() == name)
}

/// An INFO/GO request's export name and information requests.
fn info_request(data: &[u8]) -> Result<(String, Vec<u16>), String> {
    let bad = || format!("malformed NBD_OPT_INFO/GO data of {} bytes", data.len());
    let name_len = data.get(..4).ok_or_else(bad)?;
    let name_len = u32::from_be_bytes([name_len[0], name_len[1], name_len[2], name_len[3]]) as usize;
    let name = data.get(4..4 + name_len).ok_or_else(bad)?;
    let rest = &data[4 + name_len..];
    let count = rest.get(..2).ok_or_else(bad)?;
    let count = usize::from(u16::from_be_bytes([count[0], count[1]]));
    let items = &rest[2..];
    if items.len() != 2 * count {
        return Err(bad());
    }
    let wanted = items.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
    Ok((String::from_utf8_lossy(name).into_owned(), wanted))
}

/// The NBD_REP_INFO replies for `export`: always its size and flags and its
/// block sizes, its name and description when asked for.
fn send_info(w: &mut impl Write, option: u32, export: &Export, wanted: &[u16]) -> io::Result<()> {
    let mut info = INFO_EXPORT.to_be_bytes().to_vec();
    info.extend_from_slice(&export.size().to_be_bytes());
    info.extend_from_slice(&export.transmission_flags().to_be_bytes());
    write_option_reply(w, option, REP_INFO, &info)?;
    let mut sizes = INFO_BLOCK_SIZE.to_be_bytes().to_vec();
    for v in [512, export.preferred_block(), MAX_PAYLOAD] {
        sizes.extend_from_slice(&v.to_be_bytes());
    }
    write_option_reply(w, option, REP_INFO, &sizes)?;
    for (kind, text) in [(INFO_NAME, export.name()), (INFO_DESCRIPTION, export.description())] {
        if wanted.contains(&kind) {
            let mut body = kind.to_be_bytes().to_vec();
            body.extend_from_slice(text.as_bytes());
            write_option_reply(w, option, REP_INFO, &body)?;
        }
    }
    Ok(())
}

/// What a client sent, fit for a log line: control characters and escapes
/// shown escaped (a client cannot forge a line or move the terminal), and at
/// most 80 characters of it (the rest counted).
pub(crate) fn for_log(text: &str) -> String {
    const SHOWN: usize = 80;
    let mut out: String = text.chars().take(SHOWN).flat_map(char::escape_debug).collect();
    let more = text.chars().count().saturating_sub(SHOWN);
    if more > 0 {
        out.push_str(&format!("... ({more} more characters)"));
    }
    out
}

#[cfg(test)]
mod log_tests {
    use super::for_log;

    #[test]
    fn client_text_cannot_forge_a_log_line_or_flood_it() {
        let forged = "x`\nftlab serve: export `pagemap`: power cut at 0 ns\u{1b}[2J";
        let shown = for_log(forged);
        assert!(!shown.contains('\n') && !shown.contains('\u{1b}'), "{shown}");
        assert!(shown.contains("\\n") && shown.contains("\\u{1b}"), "{shown}");
        let long = "a".repeat(65536);
        let shown = for_log(&long);
        assert!(shown.len() < 120 && shown.ends_with("(65456 more characters)"), "{shown}");
    }
}
