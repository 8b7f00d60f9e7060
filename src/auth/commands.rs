//! The operator's commands on the key file: `partner-api keys issue`, `keys list` and `keys
//! revoke`. Each holds a lock beside the file (`<file>.lock`) while it reads and writes, so two
//! operators cannot lose each other's change, and writes a whole new file that replaces the old
//! one in one rename: a replica reading it sees the old file or the new one, never half.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use jiff::Timestamp;

use super::key::{IssuedKey, random_text};
use super::store::{KeyFile, KeyRecord, is_id, is_scope};

/// What `keys issue` is asked for.
pub struct Issue<'a> {
    pub partner: &'a str,
    pub scopes: &'a [String],
    /// `YYYY-MM-DD`: the key stops working when that day begins (UTC).
    pub expires: Option<&'a str>,
}

/// Issues a key: adds its record to the file (created if absent) and writes the key, once, to
/// `out`, and what was done to `note`.
pub fn issue(
    path: &Path,
    request: &Issue<'_>,
    now: Timestamp,
    out: &mut dyn Write,
    note: &mut dyn Write,
) -> Result<(), String> {
    if !is_id(request.partner, "pt") {
        return Err("--partner must be a partner's id: pt_ and letters and digits".to_owned());
    }
    if request.scopes.is_empty() {
        return Err("give at least one --scope".to_owned());
    }
    if let Some(scope) = request.scopes.iter().find(|scope| !is_scope(scope)) {
        return Err(format!(
            "--scope {scope:?} is not <things>:<verb> in lower case (things:read)"
        ));
    }
    let expires = request
        .expires
        .map(|day| {
            let date: jiff::civil::Date = day
                .parse()
                .map_err(|_| format!("--expires {day:?} is not a day (YYYY-MM-DD)"))?;
            let at = date
                .to_zoned(jiff::tz::TimeZone::UTC)
                .map_err(|error| error.to_string())?
                .timestamp();
            if at <= now {
                return Err(format!("--expires {day} is not in the future"));
            }
            Ok(at)
        })
        .transpose()?;
    let key = IssuedKey::generate();
    let id = format!("ky_{}", random_text(16));
    with_file(path, true, |file| {
        file.keys.push(KeyRecord {
            id: id.clone(),
            partner: request.partner.to_owned(),
            scopes: request.scopes.to_vec(),
            digest: key.digest().to_string(),
            created: rfc3339(now),
            expires: expires.map(rfc3339),
            revoked: None,
        });
        Ok(())
    })?;
    writeln!(out, "{}", key.expose()).map_err(|error| error.to_string())?;
    let _ = writeln!(
        note,
        "issued {id} to {} with {}{}; the key above is shown only now: only its digest is kept \
         in {}",
        request.partner,
        request.scopes.join(", "),
        expires.map_or(String::new(), |at| format!(", expiring {}", rfc3339(at))),
        path.display()
    );
    Ok(())
}

/// Lists the keys of the file, one line each, never a digest.
pub fn list(path: &Path, now: Timestamp, out: &mut dyn Write) -> Result<(), String> {
    let file = KeyFile::read(path)?;
    let mut text = String::from("id\tpartner\tscopes\tcreated\texpires\tstate\n");
    for record in &file.keys {
        let state = match (&record.revoked, &record.expires) {
            (Some(at), _) => format!("revoked {at}"),
            (None, Some(at)) if at.parse::<Timestamp>().is_ok_and(|at| at <= now) => {
                "expired".to_owned()
            }
            _ => "active".to_owned(),
        };
        text.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\t{state}\n",
            record.id,
            record.partner,
            record.scopes.join(","),
            record.created,
            record.expires.as_deref().unwrap_or("-"),
        ));
    }
    out.write_all(text.as_bytes())
        .map_err(|error| error.to_string())
}

/// Revokes the key with `id`: every replica refuses it once it has read the file again (within
/// `--tls-watch-secs`, or at once on SIGHUP).
pub fn revoke(path: &Path, id: &str, now: Timestamp, note: &mut dyn Write) -> Result<(), String> {
    with_file(path, false, |file| {
        let record = file
            .keys
            .iter_mut()
            .find(|record| record.id == id)
            .ok_or_else(|| format!("no key {id} in {}", path.display()))?;
        if let Some(at) = &record.revoked {
            return Err(format!("{id} was revoked already, at {at}"));
        }
        record.revoked = Some(rfc3339(now));
        Ok(())
    })?;
    let _ = writeln!(note, "revoked {id} in {}", path.display());
    Ok(())
}

fn rfc3339(at: Timestamp) -> String {
    at.round(jiff::Unit::Second)
        .map_or_else(|_| at.to_string(), |at| at.to_string())
}

/// Changes the file at `path` under its lock: reads it (an absent one is empty when `create`),
/// applies `change`, and replaces it.
fn with_file(
    path: &Path,
    create: bool,
    change: impl FnOnce(&mut KeyFile) -> Result<(), String>,
) -> Result<(), String> {
    let _lock = Lock::take(path)
        .map_err(|error| format!("cannot lock {}: {error}", lock_path(path).display()))?;
    let mut file = match fs::metadata(path) {
        Err(error) if error.kind() == io::ErrorKind::NotFound && create => KeyFile::default(),
        _ => KeyFile::read(path)?,
    };
    change(&mut file)?;
    file.table()?;
    let mut text = serde_json::to_string_pretty(&file).expect("a key file serializes");
    text.push('\n');
    let temporary = path.with_extension(format!("tmp-{}", std::process::id()));
    let write = || -> io::Result<()> {
        let mut out = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o640)
            .open(&temporary)?;
        out.write_all(text.as_bytes())?;
        out.sync_all()?;
        fs::rename(&temporary, path)
    };
    write().map_err(|error| {
        let _ = fs::remove_file(&temporary);
        format!("cannot write {}: {error}", path.display())
    })
}

fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// An exclusive `flock` on `<file>.lock`, released when dropped (or when the process ends).
struct Lock {
    _file: File,
}

impl Lock {
    fn take(path: &Path) -> io::Result<Lock> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o640)
            .open(lock_path(path))?;
        // Another operator's command holds it for the moment of a write: wait, but not for
        // ever (a command stopped while holding it releases it as it ends).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            // SAFETY: flock on a descriptor this function owns; no memory is involved.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(Lock { _file: file });
            }
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::WouldBlock {
                return Err(error);
            }
            if std::time::Instant::now() > deadline {
                return Err(io::Error::other("another command has held it for 10 s"));
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Caller;
    use crate::auth::store::KeyStore;
    use actix_web::http::header::HeaderValue;

    fn now() -> Timestamp {
        "2026-11-27T19:30:00.25Z".parse().unwrap()
    }

    #[test]
    fn issue_list_and_revoke_work_on_the_file() {
        let folder = std::env::temp_dir().join(format!("keys-test-{}", std::process::id()));
        fs::create_dir_all(&folder).unwrap();
        let path = folder.join("keys.json");
        let _ = fs::remove_file(&path);
        let (mut out, mut note) = (Vec::new(), Vec::new());
        let scopes = vec!["things:read".to_owned()];
        let request = Issue {
            partner: "pt_acme",
            scopes: &scopes,
            expires: Some("2027-01-01"),
        };
        issue(&path, &request, now(), &mut out, &mut note).unwrap();
        let key = String::from_utf8(out).unwrap().trim().to_owned();
        let text = fs::read_to_string(&path).unwrap();
        assert!(!text.contains(&key), "the key itself is never written");
        let file = KeyFile::read(&path).unwrap();
        let record = &file.keys[0];
        assert_eq!(record.created, "2026-11-27T19:30:00Z");
        assert_eq!(record.expires.as_deref(), Some("2027-01-01T00:00:00Z"));
        let note = String::from_utf8(note).unwrap();
        assert!(
            note.starts_with(&format!("issued {} to pt_acme with things:read", record.id)),
            "{note}"
        );

        let store = KeyStore::from_file(&path).unwrap();
        let header = [HeaderValue::from_str(&format!("Bearer {key}")).unwrap()];
        assert!(Caller::of(header.iter(), &store, now()).key().is_some());

        let mut listed = Vec::new();
        list(&path, now(), &mut listed).unwrap();
        let listed = String::from_utf8(listed).unwrap();
        assert!(
            listed.contains(&format!("{}\tpt_acme\tthings:read\t", record.id)),
            "{listed}"
        );
        assert!(listed.trim_end().ends_with("active"), "{listed}");

        revoke(&path, &record.id, now(), &mut Vec::new()).unwrap();
        assert!(
            revoke(&path, &record.id, now(), &mut Vec::new())
                .unwrap_err()
                .contains("revoked already")
        );
        assert!(
            revoke(&path, "ky_nope", now(), &mut Vec::new())
                .unwrap_err()
                .contains("no key ky_nope")
        );
        store.reload("test");
        assert!(matches!(
            Caller::of(header.iter(), &store, now()),
            Caller::Stale(crate::errors::ErrorCode::KeyRevoked, _)
        ));

        for (partner, scopes, expires, expected) in [
            ("acme", vec!["things:read".to_owned()], None, "--partner"),
            ("pt_acme", vec![], None, "--scope"),
            ("pt_acme", vec!["Things".to_owned()], None, "--scope"),
            (
                "pt_acme",
                vec!["things:read".to_owned()],
                Some("2020-01-01"),
                "future",
            ),
            (
                "pt_acme",
                vec!["things:read".to_owned()],
                Some("tomorrow"),
                "YYYY-MM-DD",
            ),
        ] {
            let request = Issue {
                partner,
                scopes: &scopes,
                expires,
            };
            let error =
                issue(&path, &request, now(), &mut Vec::new(), &mut Vec::new()).unwrap_err();
            assert!(error.contains(expected), "{error}");
        }
        fs::remove_dir_all(&folder).unwrap();
    }
}
