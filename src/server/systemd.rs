//! systemd's notification protocol (`sd_notify(3)`), in the few lines it takes: when systemd
//! starts the service with `Type=notify` it names a datagram socket in `NOTIFY_SOCKET`, and the
//! service says `READY=1` once its listeners accept, `STOPPING=1` when it starts to drain, and,
//! with `WatchdogSec=`, `WATCHDOG=1` at least every `WATCHDOG_USEC`. Here the pings come from a
//! thread of their own that asks the internal watchdog (`observability::watchdog`) first: while
//! any API worker is stalled there is no ping, so systemd restarts a service whose workers stopped
//! making progress, as Kubernetes' liveness probe does through `/livez`.
//!
//! Outside systemd (no `NOTIFY_SOCKET`) nothing is sent. A message that cannot be sent is logged
//! once and waited for at most [`SEND_TIMEOUT`]: the service serves whatever the manager hears.

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::observability::watchdog::Watchdog;

/// The longest a notification waits for room in the manager's socket: a READY=1 dropped at once
/// would leave the start to time out, while the manager reads within microseconds.
const SEND_TIMEOUT: Duration = Duration::from_millis(100);

/// How often, at most, the ping thread looks at the workers: a ping follows a recovered stall
/// within this, so only a stall close to `WatchdogSec` long restarts the service.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// Where the service manager listens, and how often it expects a ping.
#[derive(Clone, Debug)]
pub struct Notifier(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    socket: UnixDatagram,
    address: SocketAddr,
    /// `WATCHDOG_USEC`, when the manager watches this process.
    watchdog: Option<Duration>,
    /// Whether a failed send was logged already.
    warned: AtomicBool,
}

impl Notifier {
    /// The manager named by the environment (`NOTIFY_SOCKET`, `WATCHDOG_USEC`, `WATCHDOG_PID`),
    /// or `None` when there is none or it cannot be reached (logged).
    pub fn from_environment() -> Option<Notifier> {
        let path = std::env::var_os("NOTIFY_SOCKET").filter(|path| !path.is_empty())?;
        let watchdog = std::env::var("WATCHDOG_USEC")
            .ok()
            .and_then(|usec| usec.parse::<u64>().ok())
            .filter(|&usec| usec > 0)
            // The ping is meant for the process systemd named, not for a child that inherited it.
            .filter(|_| {
                std::env::var("WATCHDOG_PID")
                    .map_or(true, |pid| pid.parse() == Ok(std::process::id()))
            })
            .map(Duration::from_micros);
        match Notifier::at(&path, watchdog) {
            Ok(notifier) => Some(notifier),
            Err(error) => {
                log::warn!(
                    "NOTIFY_SOCKET {} cannot be used ({error}): the service manager hears \
                     nothing",
                    path.to_string_lossy()
                );
                None
            }
        }
    }

    /// A notifier for the socket at `path` (an absolute path, or `@name` for an abstract
    /// socket, as `sd_notify(3)` accepts), expecting a ping every `watchdog` when given.
    pub fn at(path: impl AsRef<OsStr>, watchdog: Option<Duration>) -> io::Result<Notifier> {
        let path = path.as_ref().as_bytes();
        let address = match path {
            [b'@', name @ ..] => abstract_address(name)?,
            [b'/', ..] => SocketAddr::from_pathname(OsStr::from_bytes(path))?,
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "neither an absolute path nor an abstract socket (@name)",
                ));
            }
        };
        let socket = UnixDatagram::unbound()?;
        socket.set_write_timeout(Some(SEND_TIMEOUT))?;
        Ok(Notifier(Arc::new(Inner {
            socket,
            address,
            watchdog,
            warned: AtomicBool::new(false),
        })))
    }

    /// Sends one message (newline-separated `KEY=value` pairs).
    pub fn send(&self, message: &str) {
        if let Err(error) = self
            .0
            .socket
            .send_to_addr(message.as_bytes(), &self.0.address)
            && !self.0.warned.swap(true, Ordering::Relaxed)
        {
            log::warn!("the service manager's socket refused a notification: {error}");
        }
    }

    /// The listeners accept: systemd calls the service started.
    pub fn ready(&self, status: &str) {
        self.send(&format!(
            "READY=1\nSTATUS={status}\nMAINPID={}",
            std::process::id()
        ));
    }

    /// The drain has begun: systemd calls the service stopping, whoever asked.
    pub fn stopping(&self, status: &str) {
        self.send(&format!("STOPPING=1\nSTATUS={status}"));
    }

    /// How often the manager expects a ping, when it watches.
    pub fn watchdog_interval(&self) -> Option<Duration> {
        self.0.watchdog
    }

    /// Pings the manager every half of its watchdog interval (as `sd_watchdog_enabled(3)`
    /// advises), but only while no API worker is stalled; a stall is told in `STATUS=` once.
    /// The workers are looked at more often than that ([`LOOK_EVERY`], or a quarter of the
    /// interval), and a recovered stall is pinged at once, so a stall ends in a restart only
    /// when no ping came for the whole interval: when it lasted nearly that long. Runs on a
    /// thread of its own, which ends when `watchdog` has no other handle left.
    pub fn spawn_pings(&self, watchdog: &Watchdog) {
        let Some(interval) = self.0.watchdog else {
            return;
        };
        let ping_every = interval / 2;
        let look_every = (interval / 4).clamp(Duration::from_millis(5), LOOK_EVERY);
        let notifier = self.clone();
        let watched = watchdog.downgrade();
        let spawned = std::thread::Builder::new()
            .name("systemd-watchdog".to_owned())
            .spawn(move || {
                let mut silent = false;
                let mut last_ping: Option<Instant> = None;
                while let Some(watchdog) = watched.upgrade() {
                    let stalled = watchdog.stalled();
                    drop(watchdog);
                    match (stalled.first(), silent) {
                        (None, _) => {
                            if silent {
                                notifier.send("STATUS=serving");
                            }
                            if silent || last_ping.is_none_or(|at| at.elapsed() >= ping_every) {
                                notifier.send("WATCHDOG=1");
                                last_ping = Some(Instant::now());
                            }
                            silent = false;
                        }
                        (Some(stall), false) => {
                            silent = true;
                            notifier.send(&format!("STATUS=not pinging the watchdog: {stall}"));
                        }
                        (Some(_), true) => {}
                    }
                    std::thread::sleep(look_every);
                }
            });
        if let Err(error) = spawned {
            log::error!(
                "the systemd watchdog's pings cannot start, so systemd will restart the \
                 service after WatchdogSec: {error}"
            );
        }
    }
}

#[cfg(target_os = "linux")]
fn abstract_address(name: &[u8]) -> io::Result<SocketAddr> {
    use std::os::linux::net::SocketAddrExt;
    SocketAddr::from_abstract_name(name)
}

#[cfg(not(target_os = "linux"))]
fn abstract_address(_name: &[u8]) -> io::Result<SocketAddr> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "abstract sockets exist on Linux only",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real datagram socket in a fresh folder of its own (removed when dropped).
    struct Listener {
        socket: UnixDatagram,
        path: std::path::PathBuf,
    }

    impl Listener {
        fn new(name: &str) -> Listener {
            let folder = std::env::temp_dir()
                .join(format!("partner-api-notify-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&folder);
            std::fs::create_dir_all(&folder).unwrap();
            let path = folder.join("notify");
            let socket = UnixDatagram::bind(&path).unwrap();
            socket
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            Listener { socket, path }
        }

        fn path(&self) -> String {
            self.path.to_string_lossy().into_owned()
        }
    }

    impl Drop for Listener {
        fn drop(&mut self) {
            if let Some(folder) = self.path.parent() {
                let _ = std::fs::remove_dir_all(folder);
            }
        }
    }

    fn receive(socket: &UnixDatagram) -> String {
        let mut buffer = [0; 512];
        let length = socket.recv(&mut buffer).unwrap();
        String::from_utf8(buffer[..length].to_vec()).unwrap()
    }

    #[test]
    fn ready_and_stopping_reach_a_real_socket() {
        let listener = Listener::new("ready");
        let notifier = Notifier::at(listener.path(), None).unwrap();
        notifier.ready("serving");
        assert_eq!(
            receive(&listener.socket),
            format!("READY=1\nSTATUS=serving\nMAINPID={}", std::process::id())
        );
        notifier.stopping("draining");
        assert_eq!(receive(&listener.socket), "STOPPING=1\nSTATUS=draining");
    }

    /// Pings while the worker beats, none while it is stalled (said once in STATUS), pings
    /// again once it beats: in that order, on a real socket.
    #[actix_web::test]
    async fn no_ping_while_a_worker_is_stalled() {
        let listener = Listener::new("pings");
        let watchdog = Watchdog::new(Duration::from_millis(300));
        watchdog.beat_on_this_worker();
        let notifier = Notifier::at(listener.path(), Some(Duration::from_millis(40))).unwrap();
        // Read as they come: a datagram socket queues only a few, and the sender never waits.
        let socket = listener.socket.try_clone().unwrap();
        socket
            .set_read_timeout(Some(Duration::from_secs(3)))
            .unwrap();
        let reader = std::thread::spawn(move || {
            let mut messages = Vec::new();
            // Bounded: a ping every 20 ms for about 1.5 s is far fewer than this, and the
            // reading ends 3 s after the last message (longer than the stall's silence).
            for _ in 0..1000 {
                let mut buffer = [0; 512];
                match socket.recv(&mut buffer) {
                    Ok(length) => {
                        messages.push(String::from_utf8(buffer[..length].to_vec()).unwrap());
                        // Enough once a ping follows the recovery.
                        if messages.len() >= 2 && messages[messages.len() - 2] == "STATUS=serving" {
                            break;
                        }
                    }
                    Err(_) => break,
                }
            }
            messages
        });
        notifier.spawn_pings(&watchdog);
        actix_web::rt::time::sleep(Duration::from_millis(200)).await;
        // Block this worker's thread past the threshold: its beat task cannot run.
        std::thread::sleep(Duration::from_millis(900));
        actix_web::rt::time::sleep(Duration::from_millis(400)).await;
        // Waits without blocking this thread, whose beat task must go on running (bounded).
        for _ in 0..200 {
            if reader.is_finished() {
                break;
            }
            actix_web::rt::time::sleep(Duration::from_millis(50)).await;
        }
        let messages = reader.join().unwrap();
        drop(watchdog);
        let stalled = messages
            .iter()
            .position(|message| message.starts_with("STATUS=not pinging the watchdog: worker 1 ("))
            .unwrap_or_else(|| panic!("no stall reported: {messages:?}"));
        let back = messages
            .iter()
            .position(|message| message == "STATUS=serving")
            .unwrap_or_else(|| panic!("no recovery reported: {messages:?}"));
        assert!(stalled >= 3, "pings before the stall: {messages:?}");
        assert!(
            messages[..stalled]
                .iter()
                .all(|message| message == "WATCHDOG=1"),
            "{messages:?}"
        );
        assert_eq!(
            back,
            stalled + 1,
            "nothing between stall and recovery: {messages:?}"
        );
        assert_eq!(
            messages.get(back + 1).map(String::as_str),
            Some("WATCHDOG=1")
        );
    }

    #[test]
    fn an_abstract_socket_is_reached_by_its_name() {
        let name = format!("partner-api-test-{}", std::process::id());
        let socket = UnixDatagram::bind_addr(&abstract_address(name.as_bytes()).unwrap()).unwrap();
        socket
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        Notifier::at(format!("@{name}"), None)
            .unwrap()
            .send("READY=1");
        assert_eq!(receive(&socket), "READY=1");
    }

    #[test]
    fn a_relative_path_is_refused_as_sd_notify_refuses_it() {
        let error = Notifier::at("run/notify", None).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn a_socket_nobody_listens_on_is_not_waited_for() {
        let listener = Listener::new("gone");
        let path = listener.path();
        drop(listener);
        let notifier = Notifier::at(&path, None).unwrap();
        notifier.ready("serving");
        notifier.stopping("draining");
        assert!(notifier.0.warned.load(Ordering::Relaxed));
    }
}
