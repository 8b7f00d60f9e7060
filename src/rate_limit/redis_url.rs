//! A Redis URL as the settings give it: checked once, at start-up (scheme, host, port, a
//! database), and shown without its password wherever logs, errors or `--help` show it. The
//! shared store (`redis.rs`) connects with it; the credential files (`store_files.rs`) make one.

use std::fmt;

use redis::{ConnectionAddr, ConnectionInfo, IntoConnectionInfo};

/// A Redis URL, checked at start-up; shown without its password.
#[derive(Clone)]
pub struct RedisUrl {
    /// Boxed: it is large, and settings carry it by value.
    info: Box<ConnectionInfo>,
    shown: String,
}

impl RedisUrl {
    /// `redis://[user[:password]@]host[:port][/db]` or `rediss://…` (TLS).
    pub fn parse(input: &str) -> Result<RedisUrl, String> {
        let expected = "expected memory, or a Redis URL such as redis://127.0.0.1:6379 or \
                        rediss://user:password@redis.example.com:6380/0";
        if !(input.starts_with("redis://") || input.starts_with("rediss://")) {
            return Err(expected.to_owned());
        }
        let info = input
            .into_connection_info()
            .map_err(|_| expected.to_owned())?;
        let (scheme, host) = match info.addr() {
            ConnectionAddr::Tcp(host, port) => ("redis", format!("{host}:{port}")),
            ConnectionAddr::TcpTls { host, port, .. } => ("rediss", format!("{host}:{port}")),
            _ => return Err(expected.to_owned()),
        };
        let shown = format!("{scheme}://{host}/{}", info.redis_settings().db());
        Ok(RedisUrl {
            info: Box::new(info),
            shown,
        })
    }

    /// Whether the URL carries a password of its own.
    pub fn has_password(&self) -> bool {
        self.info.redis_settings().password().is_some()
    }

    /// The password the URL carries, if any (for tests: it is never shown).
    #[cfg(test)]
    pub fn password(&self) -> Option<&str> {
        self.info.redis_settings().password()
    }

    /// The same URL with `password` (from the environment) when the URL has none.
    pub fn with_password(mut self, password: Option<&str>) -> RedisUrl {
        if let Some(password) = password.filter(|password| !password.is_empty())
            && self.info.redis_settings().password().is_none()
        {
            let settings = self.info.redis_settings().clone().set_password(password);
            self.info = Box::new(self.info.set_redis_settings(settings));
        }
        self
    }
}

/// Never the password: this is what logs and `--help` may show.
impl fmt::Display for RedisUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

impl fmt::Debug for RedisUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RedisUrl({})", self.shown)
    }
}

impl RedisUrl {
    /// What the Redis client connects with (the password included).
    pub fn connection_info(&self) -> ConnectionInfo {
        (*self.info).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked_and_shown_without_the_password() {
        let url = RedisUrl::parse("redis://user:s3cret@127.0.0.1:6380/2").unwrap();
        assert_eq!(url.to_string(), "redis://127.0.0.1:6380/2");
        assert!(!format!("{url:?}").contains("s3cret"));
        let url = RedisUrl::parse("rediss://redis.example.com").unwrap();
        assert_eq!(url.to_string(), "rediss://redis.example.com:6379/0");
        for bad in [
            "",
            "memcached://x",
            "redis://",
            "http://127.0.0.1:6379",
            "redis://h:99999",
        ] {
            assert!(RedisUrl::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_password_from_the_environment_does_not_replace_the_urls() {
        let url = RedisUrl::parse("redis://127.0.0.1:6379").unwrap();
        let with = url.clone().with_password(Some("from-env"));
        assert_eq!(with.info.redis_settings().password(), Some("from-env"));
        let own = RedisUrl::parse("redis://:own@127.0.0.1:6379").unwrap();
        let kept = own.with_password(Some("from-env"));
        assert_eq!(kept.info.redis_settings().password(), Some("own"));
    }
}
