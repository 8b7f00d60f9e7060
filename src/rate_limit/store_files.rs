//! Where the shared store's URL and password come from: the command line or the environment,
//! or files (`--redis-url-file`, `--redis-password-file`), which is how Kubernetes and systemd
//! hand a process its secrets (a mounted Secret, `LoadCredential=`) without putting them in
//! the environment, where any process of the same user and every crash report can read them.
//! Files are read at start (a file that cannot be read or holds no valid URL is a bad setting)
//! and read again on SIGHUP and whenever their contents change, so a password is rotated
//! without a restart; a bad new file is refused with one log line and the old credentials
//! stay, as a bad certificate is.

use std::fmt;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::redis_url::RedisUrl;

/// The largest credential file read: a URL or a password is a few hundred bytes, and a file
/// that grows without end (`/dev/zero`, a log given by mistake) must not grow the process.
const MAX_FILE_BYTES: u64 = 64 * 1024;

/// The settings the store's credentials come from; read again by [`StoreFiles::read`].
#[derive(Clone, Default)]
pub struct StoreFiles {
    /// The URL given directly, when no URL file is.
    pub url: Option<RedisUrl>,
    /// The password given directly, when no password file is (never shown).
    pub password: Option<String>,
    pub url_file: Option<PathBuf>,
    pub password_file: Option<PathBuf>,
}

/// The store's URL with its password, and the bytes of the files it was read from (to tell
/// a change from a new read of the same contents).
#[derive(Clone)]
pub struct Credentials {
    pub url: RedisUrl,
    pub contents: Vec<Vec<u8>>,
}

/// Never a password, nor what the files hold: this is what a `{:?}` may show.
impl fmt::Debug for StoreFiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreFiles")
            .field("url", &self.url)
            .field("password", &self.password.as_ref().map(|_| ".."))
            .field("url_file", &self.url_file)
            .field("password_file", &self.password_file)
            .finish()
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("url", &self.url)
            .field("contents", &format_args!("{} file(s)", self.contents.len()))
            .finish()
    }
}

impl StoreFiles {
    /// Whether anything comes from a file (and so may change while the service runs).
    pub fn from_files(&self) -> bool {
        self.url_file.is_some() || self.password_file.is_some()
    }

    /// The store's URL, with the password from the password file or setting when the URL has
    /// none; `None` for the in-process store. The error names the setting and the file. The
    /// files are read twice and must agree: a Secret's files are swapped together (the
    /// kubelet's `..data` link), and a read between two swaps could pair a new URL with an old
    /// password.
    pub fn read(&self) -> Result<Option<Credentials>, String> {
        let first = self.read_once()?;
        if !self.from_files() {
            return Ok(first);
        }
        let contents = |read: &Option<Credentials>| read.as_ref().map(|read| read.contents.clone());
        if contents(&first) != contents(&self.read_once()?) {
            return Err(
                "the files changed while they were read; read again at the next look".to_owned(),
            );
        }
        Ok(first)
    }

    fn read_once(&self) -> Result<Option<Credentials>, String> {
        let mut contents = Vec::new();
        let url = match &self.url_file {
            Some(path) => {
                let text = read_secret(path, "--redis-url-file (PARTNER_API_REDIS_URL_FILE)")?;
                contents.push(text.clone().into_bytes());
                Some(RedisUrl::parse(&text).map_err(|reason| {
                    format!(
                        "--redis-url-file (PARTNER_API_REDIS_URL_FILE) {}: {reason}",
                        path.display()
                    )
                })?)
            }
            None => self.url.clone(),
        };
        let Some(url) = url else {
            return Ok(None);
        };
        let password = match &self.password_file {
            Some(path) if url.has_password() => {
                return Err(format!(
                    "--redis-password-file (PARTNER_API_REDIS_PASSWORD_FILE) {} is given, but the \
                     store's URL carries a password of its own, which would win: give one of them",
                    path.display()
                ));
            }
            Some(path) => {
                let text = read_secret(
                    path,
                    "--redis-password-file (PARTNER_API_REDIS_PASSWORD_FILE)",
                )?;
                contents.push(text.clone().into_bytes());
                Some(text)
            }
            None => self.password.clone(),
        };
        Ok(Some(Credentials {
            url: url.with_password(password.as_deref()),
            contents,
        }))
    }
}

/// A secret file's text without the line ending an editor or `kubectl create secret
/// --from-file` leaves at its end; an empty, unreadable or oversized file, or anything but a
/// regular file (a FIFO would block the reading thread), is an error naming `setting`.
fn read_secret(path: &Path, setting: &str) -> Result<String, String> {
    let failed = |why: String| format!("{setting} {}: {why}", path.display());
    // Opened without waiting: opening a FIFO for reading would block until a writer came.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|error| failed(error.to_string()))?;
    let metadata = file.metadata().map_err(|error| failed(error.to_string()))?;
    if !metadata.is_file() {
        return Err(failed("not a regular file".to_owned()));
    }
    let mut text = String::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|error| failed(error.to_string()))?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(failed(format!("larger than {MAX_FILE_BYTES} bytes")));
    }
    let text = text.trim_end_matches(['\n', '\r']).to_owned();
    if text.is_empty() {
        return Err(failed("the file is empty".to_owned()));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(name: &str) -> PathBuf {
        let folder = std::env::temp_dir().join(format!(
            "partner-api-store-files-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&folder);
        std::fs::create_dir_all(&folder).unwrap();
        folder
    }

    #[test]
    fn the_files_give_the_url_and_its_password() {
        let folder = folder("both");
        std::fs::write(folder.join("url"), "rediss://redis.example.test:6380/1\n").unwrap();
        std::fs::write(folder.join("password"), "s3cret\n").unwrap();
        let files = StoreFiles {
            url_file: Some(folder.join("url")),
            password_file: Some(folder.join("password")),
            ..StoreFiles::default()
        };
        let read = files.read().unwrap().unwrap();
        assert_eq!(read.url.to_string(), "rediss://redis.example.test:6380/1");
        assert_eq!(read.url.password(), Some("s3cret"));
        assert_eq!(
            read.contents,
            [
                b"rediss://redis.example.test:6380/1".to_vec(),
                b"s3cret".to_vec()
            ]
        );
        std::fs::remove_dir_all(folder).unwrap();
    }

    #[test]
    fn no_password_shows_in_debug() {
        let folder = folder("debug");
        std::fs::write(folder.join("url"), "redis://user:in-the-url@127.0.0.1:6379").unwrap();
        let files = StoreFiles {
            password: Some("given-directly".to_owned()),
            url_file: Some(folder.join("url")),
            ..StoreFiles::default()
        };
        let read = files.read().unwrap().unwrap();
        let shown = format!("{files:?} {read:?}");
        assert!(
            !shown.contains("given-directly") && !shown.contains("in-the-url"),
            "{shown}"
        );
        std::fs::remove_dir_all(folder).unwrap();
    }

    #[test]
    fn a_password_file_beside_a_url_with_a_password_is_refused() {
        let folder = folder("both-passwords");
        std::fs::write(folder.join("password"), "from-file").unwrap();
        let files = StoreFiles {
            url: Some(RedisUrl::parse("redis://:own@127.0.0.1:6379").unwrap()),
            password_file: Some(folder.join("password")),
            ..StoreFiles::default()
        };
        let error = files.read().unwrap_err();
        assert!(error.contains("carries a password of its own"), "{error}");
        std::fs::remove_dir_all(folder).unwrap();
    }

    #[test]
    fn a_password_file_goes_with_a_url_setting_and_nothing_means_memory() {
        let folder = folder("password");
        std::fs::write(folder.join("password"), "from-file").unwrap();
        let files = StoreFiles {
            url: Some(RedisUrl::parse("redis://127.0.0.1:6379").unwrap()),
            password_file: Some(folder.join("password")),
            ..StoreFiles::default()
        };
        assert_eq!(
            files.read().unwrap().unwrap().url.password(),
            Some("from-file")
        );
        let memory = StoreFiles {
            password_file: Some(folder.join("password")),
            ..StoreFiles::default()
        };
        assert!(memory.read().unwrap().is_none());
        std::fs::remove_dir_all(folder).unwrap();
    }

    #[test]
    fn a_missing_empty_large_odd_or_bad_file_is_named() {
        let folder = folder("bad");
        std::fs::write(folder.join("empty"), "\n").unwrap();
        std::fs::write(folder.join("bad"), "memcached://x").unwrap();
        std::fs::write(folder.join("large"), vec![b'a'; 70_000]).unwrap();
        std::fs::create_dir(folder.join("folder")).unwrap();
        let fifo = std::ffi::CString::new(folder.join("fifo").to_str().unwrap()).unwrap();
        // SAFETY: a valid path, NUL-terminated; mkfifo reads it and keeps nothing.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        for (file, expected) in [
            ("missing", "No such file"),
            ("empty", "the file is empty"),
            ("bad", "expected memory, or a Redis URL"),
            ("large", "larger than 65536 bytes"),
            ("folder", "not a regular file"),
            ("fifo", "not a regular file"),
        ] {
            let files = StoreFiles {
                url_file: Some(folder.join(file)),
                ..StoreFiles::default()
            };
            let error = files.read().unwrap_err();
            assert!(
                error.starts_with("--redis-url-file (PARTNER_API_REDIS_URL_FILE) ")
                    && error.contains(expected),
                "{error}"
            );
        }
        std::fs::remove_dir_all(folder).unwrap();
    }
}
