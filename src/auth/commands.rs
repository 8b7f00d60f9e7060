//! The operator's commands on the key file: `partner-api keys issue`, `keys list` and `keys
//! revoke`. Each holds a lock beside the file (`<file>.lock`) while it reads and writes, so two
//! operators cannot lose each other's change, and writes a whole new file that replaces the old
//! one in one rename: a replica reading it sees the old file or the new one, never half.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
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
    /// The group the file is given (the one the service reads it through), instead of its
    /// present one.
    pub group: Option<&'a str>,
    /// A test key (`pak_test_...`): it reaches only test data.
    pub test: bool,
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
    let key = IssuedKey::generate_for(request.test);
    let id = format!("ky_{}", random_text(16));
    with_file(path, true, request.group, |file| {
        file.keys.push(KeyRecord {
            id: id.clone(),
            partner: request.partner.to_owned(),
            scopes: request.scopes.to_vec(),
            digest: key.digest().to_string(),
            created: rfc3339(now),
            expires: expires.map(rfc3339),
            revoked: None,
            test: request.test,
        });
        Ok(())
    })?;
    writeln!(out, "{}", key.expose()).map_err(|error| error.to_string())?;
    let _ = writeln!(
        note,
        "issued {}{id} to {} with {}{}; the key above is shown only now: only its digest is \
         kept in {}",
        if request.test { "the test key " } else { "" },
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
    let mut text = String::from("id\tpartner\tmode\tscopes\tcreated\texpires\tstate\n");
    for record in &file.keys {
        let state = match (&record.revoked, &record.expires) {
            (Some(at), _) => format!("revoked {at}"),
            (None, Some(at)) if at.parse::<Timestamp>().is_ok_and(|at| at <= now) => {
                "expired".to_owned()
            }
            _ => "active".to_owned(),
        };
        text.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{state}\n",
            record.id,
            record.partner,
            if record.test { "test" } else { "live" },
            record.scopes.join(","),
            record.created,
            record.expires.as_deref().unwrap_or("-"),
        ));
    }
    out.write_all(text.as_bytes())
        .map_err(|error| error.to_string())
}

/// Revokes the key with `id`: every replica refuses it once it has read the file again (within
/// `--tls-watch-secs`, or at once on SIGHUP). `group` as for [`Issue::group`].
pub fn revoke(
    path: &Path,
    id: &str,
    group: Option<&str>,
    now: Timestamp,
    note: &mut dyn Write,
) -> Result<(), String> {
    with_file(path, false, group, |file| {
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

/// Changes the file at `path` under its lock: reads it (an absent one is empty when `create`,
/// an empty one always),
/// applies `change`, and replaces it with a file of the same owner, group and mode (the group
/// `group` names instead, when given). A result the service's group could not read, or that
/// anyone but its owner could write, is refused before anything is written.
fn with_file(
    path: &Path,
    create: bool,
    group: Option<&str>,
    change: impl FnOnce(&mut KeyFile) -> Result<(), String>,
) -> Result<(), String> {
    let _lock = Lock::take(path)
        .map_err(|error| format!("cannot lock {}: {error}", lock_path(path).display()))?;
    refuse_open_folder(path)?;
    // Opened once, never through a link and without waiting on a FIFO: its owner, group, mode
    // and text are all the file's own, whatever is renamed in meanwhile.
    let opened = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path);
    let (existing, text) = match opened {
        Ok(mut opened) => {
            let metadata = opened
                .metadata()
                .map_err(|error| format!("cannot read the key file {}: {error}", path.display()))?;
            if !metadata.is_file() {
                return Err(format!("{} is not a regular file", path.display()));
            }
            let mut text = String::new();
            std::io::Read::read_to_string(&mut opened, &mut text)
                .map_err(|error| format!("cannot read the key file {}: {error}", path.display()))?;
            (Some(metadata), text)
        }
        Err(error) if error.raw_os_error() == Some(libc::ELOOP) => {
            return Err(format!(
                "{} is a symbolic link: give the key file's own path (the commands replace the \
                 file, and would replace the link)",
                path.display()
            ));
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound && create => (None, String::new()),
        Err(error) => {
            return Err(format!(
                "cannot read the key file {}: {error}",
                path.display()
            ));
        }
    };
    // An empty file is one made ready for the first key with its group and mode (`install -m
    // 0640 -g partner-api-tls /dev/null keys.json`, as OPERATIONS.md says).
    let mut file = if text.is_empty() {
        KeyFile::default()
    } else {
        KeyFile::parse(&text, path)?
    };
    change(&mut file)?;
    file.table()?;
    let ownership = Ownership::decide(existing.as_ref(), group)?;
    ownership.check(path)?;
    if ownership.gid == 0 && group.is_none() {
        eprintln!(
            "partner-api keys: warning: {} belongs to the group root: a service that reads it \
             through its group (the shipped unit's partner-api-tls) cannot; give it that group \
             with --group",
            path.display()
        );
    }
    let mut text = serde_json::to_string_pretty(&file).expect("a key file serializes");
    text.push('\n');
    replace(path, text.as_bytes(), ownership)
}

/// Refuses a key file in a folder that others than its owner may write (unless it is sticky):
/// whoever may write the folder may replace the file, whatever the file's own mode says.
fn refuse_open_folder(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    let metadata = fs::metadata(folder)
        .map_err(|error| format!("cannot read the folder {}: {error}", folder.display()))?;
    let sticky = metadata.mode() & 0o1000 != 0;
    if metadata.mode() & 0o022 != 0 && !sticky {
        return Err(format!(
            "the folder {} is mode {:04o}: others than its owner may replace the key file in \
             it; keep the key file in a folder only its owner may write (chmod go-w)",
            folder.display(),
            metadata.mode() & 0o7777
        ));
    }
    Ok(())
}

/// Who owns the key file and who may read it: kept from the file replaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ownership {
    uid: u32,
    gid: u32,
    /// Permission bits only.
    mode: u32,
}

impl Ownership {
    /// The existing file's owner, group and mode, or, for a new file, the runner's user and
    /// group with 0640; `group` (a name or a number) replaces the group either way.
    fn decide(existing: Option<&fs::Metadata>, group: Option<&str>) -> Result<Ownership, String> {
        use std::os::unix::fs::MetadataExt;
        let mut ownership = match existing {
            Some(metadata) => Ownership {
                uid: metadata.uid(),
                gid: metadata.gid(),
                mode: metadata.mode() & 0o777,
            },
            // SAFETY: neither call touches memory; both always succeed.
            None => unsafe {
                Ownership {
                    uid: libc::geteuid(),
                    gid: libc::getegid(),
                    mode: 0o640,
                }
            },
        };
        if let Some(group) = group {
            ownership.gid = group_id(group)?;
        }
        Ok(ownership)
    }

    /// Refuses a key file the service could not read through its group, or that someone
    /// other than its owner could change.
    fn check(self, path: &Path) -> Result<(), String> {
        if self.mode & 0o040 == 0 {
            return Err(format!(
                "{} would be mode {:04o}, which its group cannot read: the service reads it \
                 through its group (systemd's SupplementaryGroups=, a pod's fsGroup), so it \
                 would keep the keys it read before, revoked ones included. Make it readable \
                 by the group (chmod g+r) and name that group (chgrp, or --group)",
                path.display(),
                self.mode
            ));
        }
        if self.mode & 0o022 != 0 {
            return Err(format!(
                "{} would be mode {:04o}, which lets others than its owner change it (and \
                 issue themselves a key): chmod go-w it",
                path.display(),
                self.mode
            ));
        }
        Ok(())
    }
}

/// The id of `group`, a group's name or its number.
fn group_id(group: &str) -> Result<u32, String> {
    if let Ok(gid) = group.parse::<u32>() {
        return Ok(gid);
    }
    let name = std::ffi::CString::new(group)
        .map_err(|_| format!("--group {group:?} is not a group's name"))?;
    let mut entry: libc::group = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::group = std::ptr::null_mut();
    let mut buffer = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: every pointer is to memory this function owns, sized as passed; the result is
    // read only when getgrnam_r says it filled `entry`.
    let error = unsafe {
        libc::getgrnam_r(
            name.as_ptr(),
            &mut entry,
            buffer.as_mut_ptr(),
            buffer.len(),
            &mut found,
        )
    };
    if error != 0 || found.is_null() {
        return Err(format!("--group {group:?}: no such group on this machine"));
    }
    Ok(entry.gr_gid)
}

/// Replaces the file at `path` with `contents`, owned and moded as `ownership` says, in one
/// rename: the new file is written beside it under a name of its own (created exclusively,
/// never through a link someone planted), synced, renamed over the old one, and the folder
/// synced, so that a crash leaves the old file or the new one, whole.
fn replace(path: &Path, contents: &[u8], ownership: Ownership) -> Result<(), String> {
    let failed = |error: io::Error| format!("cannot write {}: {error}", path.display());
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| format!("{} names no file", path.display()))?;
    let (temporary, mut out) = create_beside(folder, name).map_err(failed)?;
    let write = |out: &mut File| -> io::Result<()> {
        out.write_all(contents)?;
        // The new file's owner and group as made (a setgid folder gives its own group).
        let made = out.metadata()?;
        let (uid, gid) = {
            use std::os::unix::fs::MetadataExt;
            (made.uid(), made.gid())
        };
        if (ownership.uid, ownership.gid) != (uid, gid) {
            std::os::unix::fs::fchown(&*out, Some(ownership.uid), Some(ownership.gid)).map_err(
                |error| {
                    io::Error::new(
                        error.kind(),
                        format!(
                            "cannot give the new file the owner {} and group {} (run the \
                             command as the file's owner, or as root): {error}",
                            ownership.uid, ownership.gid
                        ),
                    )
                },
            )?;
        }
        out.set_permissions(fs::Permissions::from_mode(ownership.mode))?;
        out.sync_all()?;
        fs::rename(&temporary, path)
    };
    write(&mut out).map_err(|error| {
        let _ = fs::remove_file(&temporary);
        failed(error)
    })?;
    // Done: the rename is what every reader sees. A folder whose sync fails (some network
    // file systems refuse it) leaves the rename to the file system's own schedule.
    if let Err(error) = File::open(folder).and_then(|folder| folder.sync_all()) {
        eprintln!(
            "partner-api keys: warning: {} was replaced, but its folder could not be synced: \
             {error}",
            path.display()
        );
    }
    Ok(())
}

/// A new file in `folder`, `.<name>.tmp-` and random letters, opened with `O_CREAT | O_EXCL |
/// O_NOFOLLOW` and mode 0600: a name taken already (or a link planted there) is never opened,
/// and another is drawn.
fn create_beside(folder: &Path, name: &std::ffi::OsStr) -> io::Result<(PathBuf, File)> {
    let mut last = None;
    for _ in 0..8 {
        let mut temporary = std::ffi::OsString::from(".");
        temporary.push(name);
        temporary.push(format!(".tmp-{}", random_text(12)));
        let temporary = folder.join(temporary);
        match create_exclusive(&temporary) {
            Ok(file) => return Ok((temporary, file)),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => last = Some(error),
            Err(error) => return Err(error),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free name")))
}

/// A new file at `path`, mode 0600: `O_CREAT | O_EXCL | O_NOFOLLOW`, so that a file or a link
/// already there is an error, never opened or followed.
fn create_exclusive(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
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
        // Read-only when it is there (a lock needs no more, so any operator who may read it
        // can take it), made when it is not; never through a link, never waiting on a FIFO.
        let at = lock_path(path);
        let open = || {
            OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                .open(&at)
        };
        let file = match open() {
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                match create_exclusive(&at) {
                    Ok(file) => {
                        file.set_permissions(fs::Permissions::from_mode(0o640))?;
                        file
                    }
                    // Made by another command in meanwhile.
                    Err(error) if error.kind() == io::ErrorKind::AlreadyExists => open()?,
                    Err(error) => return Err(error),
                }
            }
            opened => opened?,
        };
        if !file.metadata()?.is_file() {
            return Err(io::Error::other("not a regular file"));
        }
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
            group: None,
            test: false,
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
            listed.contains(&format!("{}\tpt_acme\tlive\tthings:read\t", record.id)),
            "{listed}"
        );
        assert!(listed.trim_end().ends_with("active"), "{listed}");

        revoke(&path, &record.id, None, now(), &mut Vec::new()).unwrap();
        assert!(
            revoke(&path, &record.id, None, now(), &mut Vec::new())
                .unwrap_err()
                .contains("revoked already")
        );
        assert!(
            revoke(&path, "ky_nope", None, now(), &mut Vec::new())
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
                group: None,
                test: false,
            };
            let error =
                issue(&path, &request, now(), &mut Vec::new(), &mut Vec::new()).unwrap_err();
            assert!(error.contains(expected), "{error}");
        }
        fs::remove_dir_all(&folder).unwrap();
    }

    /// A folder of its own for one test.
    fn folder(name: &str) -> PathBuf {
        let folder = std::env::temp_dir().join(format!("keys-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&folder);
        fs::create_dir_all(&folder).unwrap();
        folder
    }

    fn issue_one(path: &Path, group: Option<&str>) -> Result<(), String> {
        let scopes = vec!["things:read".to_owned()];
        let request = Issue {
            partner: "pt_acme",
            scopes: &scopes,
            expires: None,
            group,
            test: false,
        };
        issue(path, &request, now(), &mut Vec::new(), &mut Vec::new())
    }

    fn owner_group_mode(path: &Path) -> (u32, u32, u32) {
        use std::os::unix::fs::MetadataExt;
        let metadata = fs::symlink_metadata(path).unwrap();
        (metadata.uid(), metadata.gid(), metadata.mode() & 0o7777)
    }

    /// The folder's names, the key file's own first: what a command left behind.
    fn names(folder: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(folder)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    /// The fault an operator hit: the service reads the file through its group, and a command
    /// run as root wrote it back root:root 0640, so the service could no longer read it and a
    /// revoked key stayed in force. Now the file keeps its owner, group and mode (root can
    /// give any; another runner, its own).
    #[test]
    fn the_commands_keep_the_files_owner_group_and_mode() {
        let folder = folder("ownership");
        let path = folder.join("keys.json");
        issue_one(&path, None).unwrap();
        // SAFETY: neither call touches memory.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        assert_eq!(owner_group_mode(&path), (uid, gid, 0o640), "a new file");
        let (owner, group) = if uid == 0 { (4242, 4343) } else { (uid, gid) };
        std::os::unix::fs::chown(&path, Some(owner), Some(group)).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        issue_one(&path, None).unwrap();
        assert_eq!(owner_group_mode(&path), (owner, group, 0o644));
        let id = KeyFile::read(&path).unwrap().keys[0].id.clone();
        revoke(&path, &id, None, now(), &mut Vec::new()).unwrap();
        assert_eq!(owner_group_mode(&path), (owner, group, 0o644));
        assert_eq!(KeyFile::read(&path).unwrap().keys.len(), 2);
        // --group, by number and by name, replaces the group only.
        let named = if uid == 0 { "root" } else { &gid.to_string() };
        issue_one(&path, Some(named)).unwrap();
        assert_eq!(
            owner_group_mode(&path),
            (owner, if uid == 0 { 0 } else { gid }, 0o644)
        );
        assert_eq!(
            issue_one(&path, Some("no-such-group-here")).unwrap_err(),
            "--group \"no-such-group-here\": no such group on this machine"
        );
        assert_eq!(names(&folder), ["keys.json", "keys.json.lock"]);
        fs::remove_dir_all(&folder).unwrap();
    }

    #[test]
    fn a_test_key_is_issued_recorded_and_listed_as_one() {
        let folder = folder("test-key");
        let path = folder.join("keys.json");
        let scopes = vec!["things:read".to_owned()];
        let request = Issue {
            partner: "pt_trial",
            scopes: &scopes,
            expires: None,
            group: None,
            test: true,
        };
        let (mut out, mut note) = (Vec::new(), Vec::new());
        issue(&path, &request, now(), &mut out, &mut note).unwrap();
        let key = String::from_utf8(out).unwrap().trim().to_owned();
        assert!(key.starts_with("pak_test_"), "{key}");
        let file = KeyFile::read(&path).unwrap();
        assert!(file.keys[0].test);
        assert!(
            fs::read_to_string(&path)
                .unwrap()
                .contains("\"test\": true")
        );
        assert!(String::from_utf8(note).unwrap().starts_with(&format!(
            "issued the test key {} to pt_trial",
            file.keys[0].id
        )));
        let mut listed = Vec::new();
        list(&path, now(), &mut listed).unwrap();
        let listed = String::from_utf8(listed).unwrap();
        assert!(
            listed.contains(&format!(
                "{}\tpt_trial\ttest\tthings:read\t",
                file.keys[0].id
            )),
            "{listed}"
        );
        let store = KeyStore::from_file(&path).unwrap();
        let header = [HeaderValue::from_str(&format!("Bearer {key}")).unwrap()];
        assert!(Caller::of(header.iter(), &store, now()).key().unwrap().test);
        fs::remove_dir_all(&folder).unwrap();
    }

    /// The first key goes into a file made empty with its group and mode beforehand, and the
    /// file keeps them.
    #[test]
    fn an_empty_file_made_ready_takes_the_first_key() {
        let folder = folder("empty");
        let path = folder.join("keys.json");
        fs::write(&path, "").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        issue_one(&path, None).unwrap();
        assert_eq!(KeyFile::read(&path).unwrap().keys.len(), 1);
        assert_eq!(owner_group_mode(&path).2, 0o644);
        fs::remove_dir_all(&folder).unwrap();
    }

    #[test]
    fn a_file_its_group_could_not_read_or_others_could_change_is_refused_unchanged() {
        let folder = folder("modes");
        let path = folder.join("keys.json");
        issue_one(&path, None).unwrap();
        let before = fs::read(&path).unwrap();
        for (mode, expected) in [
            (0o600, "which its group cannot read"),
            (0o400, "which its group cannot read"),
            (0o660, "which lets others than its owner change it"),
            (0o642, "which lets others than its owner change it"),
        ] {
            fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
            let error = issue_one(&path, None).unwrap_err();
            assert!(
                error.contains(&format!("would be mode {mode:04o}, {expected}")),
                "{error}"
            );
            assert_eq!(fs::read(&path).unwrap(), before, "{mode:o}");
            assert_eq!(owner_group_mode(&path).2, mode);
        }
        assert_eq!(names(&folder), ["keys.json", "keys.json.lock"]);
        fs::remove_dir_all(&folder).unwrap();
    }

    /// The new file is created exclusively: a link or a file planted at its name is an error,
    /// never followed or truncated (the name is also drawn at random, so it cannot be planted
    /// in advance); a FIFO planted as the lock is refused, not waited on.
    #[test]
    fn a_link_or_fifo_planted_where_a_command_writes_is_never_opened() {
        let folder = folder("exclusive");
        let target = folder.join("elsewhere");
        fs::write(&target, "untouched\n").unwrap();
        let planted = folder.join("planted");
        std::os::unix::fs::symlink(&target, &planted).unwrap();
        let error = create_exclusive(&planted).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
        fs::write(folder.join("file"), "kept\n").unwrap();
        assert_eq!(
            create_exclusive(&folder.join("file")).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        assert_eq!(fs::read_to_string(&target).unwrap(), "untouched\n");
        assert_eq!(fs::read_to_string(folder.join("file")).unwrap(), "kept\n");
        let path = folder.join("keys.json");
        let fifo = std::ffi::CString::new(lock_path(&path).to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path this test owns.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let error = issue_one(&path, None).unwrap_err();
        assert!(
            error.starts_with("cannot lock") && error.ends_with("not a regular file"),
            "{error}"
        );
        fs::remove_dir_all(&folder).unwrap();
    }

    /// A folder others may write lets them replace the key file: refused.
    #[test]
    fn a_key_file_in_a_folder_others_may_write_is_refused() {
        let folder = folder("open-folder");
        fs::set_permissions(&folder, fs::Permissions::from_mode(0o777)).unwrap();
        let error = issue_one(&folder.join("keys.json"), None).unwrap_err();
        assert!(
            error.contains("others than its owner may replace the key file"),
            "{error}"
        );
        fs::set_permissions(&folder, fs::Permissions::from_mode(0o1777)).unwrap();
        issue_one(&folder.join("keys.json"), None).unwrap();
        fs::remove_dir_all(&folder).unwrap();
    }

    /// The temporary file was `keys.tmp-<pid>`, opened without O_EXCL or O_NOFOLLOW: a link
    /// planted there by someone who can write the folder made the command write through it.
    /// Now its name is drawn at random and it is created exclusively, so a planted link is never
    /// followed; and a key file that is itself a link is refused, not replaced by a file.
    #[test]
    fn planted_links_are_never_followed() {
        let folder = folder("links");
        let path = folder.join("keys.json");
        let target = folder.join("elsewhere");
        fs::write(&target, "untouched\n").unwrap();
        issue_one(&path, None).unwrap();
        for planted in [
            format!("keys.tmp-{}", std::process::id()),
            "keys.json.lock".to_owned(),
        ] {
            let _ = fs::remove_file(folder.join(&planted));
            std::os::unix::fs::symlink(&target, folder.join(&planted)).unwrap();
            let result = issue_one(&path, None);
            if planted == "keys.json.lock" {
                assert!(
                    result.unwrap_err().starts_with("cannot lock"),
                    "a planted lock link is refused"
                );
            } else {
                result.unwrap();
            }
            assert_eq!(fs::read_to_string(&target).unwrap(), "untouched\n");
            fs::remove_file(folder.join(&planted)).unwrap();
        }
        let linked = folder.join("linked.json");
        std::os::unix::fs::symlink(&path, &linked).unwrap();
        let error = issue_one(&linked, None).unwrap_err();
        assert!(error.contains("is a symbolic link"), "{error}");
        assert!(
            fs::symlink_metadata(&linked)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            names(&folder),
            ["elsewhere", "keys.json", "linked.json", "linked.json.lock"]
        );
        fs::remove_dir_all(&folder).unwrap();
    }
}
