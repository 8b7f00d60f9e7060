//! systemd's notifications (`sd_notify(3)`), sent with the sd-notify crate: when systemd starts
//! the service with `Type=notify` it names a datagram socket in `NOTIFY_SOCKET`, and the service
//! says `READY=1` once its listeners accept, `STOPPING=1` when it starts to drain, and, with
//! `WatchdogSec=`, `WATCHDOG=1` at least every `WATCHDOG_USEC`. What is the service's own is
//! when it pings: from a thread of its own that asks the internal watchdog
//! (`observability::watchdog`) first, so that while any API worker is stalled there is no
//! ping and systemd restarts a service whose workers stopped making progress, as Kubernetes'
//! liveness probe does through `/livez`.
//!
//! Outside systemd (no `NOTIFY_SOCKET`) nothing is sent. A READY or STOPPING that cannot be
//! sent is logged as an error, a ping or status line that cannot be sent once: the service
//! serves whatever the manager hears.
//!
//! The sending itself is the service's ([`socket_sink`], a dozen lines): sd-notify 0.5
//! connects to a path only, while `sd_notify(3)` also names abstract sockets (`@name`, which
//! managers in containers use), and sends with no deadline, so a manager whose queue is full
//! would hold start-up, the drain or the ping thread. sd-notify still writes the messages
//! (`NotifyState`) and reads the watchdog's variables.

use std::ffi::OsString;
use std::io;
use std::os::unix::net::UnixDatagram;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sd_notify::NotifyState;

use crate::observability::watchdog::Watchdog;

/// How often, at most, the ping thread looks at the workers: a ping follows a recovered stall
/// within this, so only a stall close to `WatchdogSec` long restarts the service.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// How long READY and STOPPING may wait for room on the manager's socket: each is sent once,
/// and a lost READY leaves a `Type=notify` unit starting until systemd times it out, so they
/// wait as long as a manager's queue takes to drain in a busy boot (libsystemd waits without
/// limit), but not so long that a broken manager holds start-up or the drain.
const STATE_SEND_TIMEOUT: Duration = Duration::from_secs(2);

/// How long a ping or a status line may wait: another follows within the watchdog interval.
const PING_SEND_TIMEOUT: Duration = Duration::from_millis(100);

/// Where notifications go, each with how long it may wait: the manager's socket
/// ([`socket_sink`]) in production, a recorder in tests.
type Sink = Arc<dyn Fn(&[NotifyState], Duration) -> io::Result<()> + Send + Sync>;

/// Sends each notification as one datagram to `socket`, a path or, with a leading `@`, an
/// abstract name (`sd_notify(3)`), waiting at most its deadline for room.
fn socket_sink(socket: OsString) -> Sink {
    Arc::new(move |states, deadline| {
        let message: String = states.iter().map(|state| format!("{state}\n")).collect();
        let datagram = UnixDatagram::unbound()?;
        connect(&datagram, &socket)?;
        datagram.set_write_timeout(Some(deadline))?;
        if datagram.send(message.as_bytes())? != message.len() {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                "the notification was cut short",
            ));
        }
        Ok(())
    })
}

fn connect(datagram: &UnixDatagram, socket: &std::ffi::OsStr) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    match socket.as_bytes().strip_prefix(b"@") {
        #[cfg(target_os = "linux")]
        Some(name) => {
            use std::os::linux::net::SocketAddrExt;
            let address = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
            datagram.connect_addr(&address)
        }
        #[cfg(not(target_os = "linux"))]
        Some(_) => Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "abstract sockets are Linux's",
        )),
        None => datagram.connect(socket),
    }
}

/// The service manager, and how often it expects a ping.
#[derive(Clone)]
pub struct Notifier {
    sink: Sink,
    /// `WATCHDOG_USEC`, when the manager watches this process.
    watchdog: Option<Duration>,
    /// Whether a failed send was logged already.
    warned: Arc<AtomicBool>,
}

impl Notifier {
    /// The manager named by the environment (`NOTIFY_SOCKET`, `WATCHDOG_USEC`, `WATCHDOG_PID`),
    /// or `None` when there is none.
    pub fn from_environment() -> Option<Notifier> {
        let socket = std::env::var_os("NOTIFY_SOCKET").filter(|path| !path.is_empty())?;
        // sd-notify reads WATCHDOG_PID too: the ping is meant for the process systemd named,
        // not for a child that inherited the variables.
        let watchdog = sd_notify::watchdog_enabled().filter(|interval| !interval.is_zero());
        Some(Notifier::new(socket_sink(socket), watchdog))
    }

    fn new(sink: Sink, watchdog: Option<Duration>) -> Notifier {
        Notifier {
            sink,
            watchdog,
            warned: Arc::new(AtomicBool::new(false)),
        }
    }

    /// A ping or a status line: a failure is logged once (they repeat).
    fn send(&self, states: &[NotifyState]) {
        if let Err(error) = (self.sink)(states, PING_SEND_TIMEOUT)
            && !self.warned.swap(true, Ordering::Relaxed)
        {
            log::warn!("the service manager's socket refused a notification: {error}");
        }
    }

    /// READY or STOPPING, sent once each: a failure is always logged, whatever pings logged.
    fn send_state(&self, states: &[NotifyState], consequence: &str) {
        if let Err(error) = (self.sink)(states, STATE_SEND_TIMEOUT) {
            log::error!(
                "the service manager's socket refused {}: {error}; {consequence}",
                states.first().map_or_else(String::new, ToString::to_string)
            );
        }
    }

    /// The listeners accept: systemd calls the service started.
    pub fn ready(&self, status: &str) {
        self.send_state(
            &[
                NotifyState::Ready,
                NotifyState::Status(status),
                NotifyState::MainPid(std::process::id()),
            ],
            "a Type=notify unit stays starting until systemd's start timeout ends it",
        );
    }

    /// The drain has begun: systemd calls the service stopping, whoever asked.
    pub fn stopping(&self, status: &str) {
        self.send_state(
            &[NotifyState::Stopping, NotifyState::Status(status)],
            "the manager does not know the service is draining",
        );
    }

    /// How often the manager expects a ping, when it watches.
    pub fn watchdog_interval(&self) -> Option<Duration> {
        self.watchdog
    }

    /// Pings the manager every half of its watchdog interval (as `sd_watchdog_enabled(3)`
    /// advises), but only while no API worker is stalled; a stall is told in `STATUS=` once.
    /// The workers are looked at more often than that ([`LOOK_EVERY`], or a quarter of the
    /// interval), and a recovered stall is pinged at once, so a stall ends in a restart only
    /// when no ping came for the whole interval: when it lasted nearly that long. Runs on a
    /// thread of its own, which ends when `watchdog` has no other handle left.
    pub fn spawn_pings(&self, watchdog: &Watchdog) {
        let Some(interval) = self.watchdog else {
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
                                notifier.send(&[NotifyState::Status("serving")]);
                            }
                            if silent || last_ping.is_none_or(|at| at.elapsed() >= ping_every) {
                                notifier.send(&[NotifyState::Watchdog]);
                                last_ping = Some(Instant::now());
                            }
                            silent = false;
                        }
                        (Some(stall), false) => {
                            silent = true;
                            let status = format!("not pinging the watchdog: {stall}");
                            notifier.send(&[NotifyState::Status(&status)]);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// A notifier whose messages arrive on a channel, each as the lines sd-notify would send.
    fn recorded(watchdog: Option<Duration>) -> (Notifier, mpsc::Receiver<String>) {
        let (sender, receiver) = mpsc::channel();
        let sender = std::sync::Mutex::new(sender);
        let sink: Sink = Arc::new(move |states, _| {
            let lines: Vec<String> = states.iter().map(ToString::to_string).collect();
            let _ = sender.lock().unwrap().send(lines.join("\n"));
            Ok(())
        });
        (Notifier::new(sink, watchdog), receiver)
    }

    #[test]
    fn ready_and_stopping_say_what_systemd_reads() {
        let (notifier, messages) = recorded(None);
        notifier.ready("serving");
        assert_eq!(
            messages.recv().unwrap(),
            format!("READY=1\nSTATUS=serving\nMAINPID={}", std::process::id())
        );
        notifier.stopping("draining");
        assert_eq!(messages.recv().unwrap(), "STOPPING=1\nSTATUS=draining");
    }

    /// The manager's socket as `sd_notify(3)` names it: a path, or `@` and an abstract name;
    /// each notification one datagram of `KEY=value` lines.
    #[cfg(target_os = "linux")]
    #[test]
    fn notifications_reach_a_path_and_an_abstract_socket() {
        use std::os::linux::net::SocketAddrExt;
        use std::os::unix::net::SocketAddr;

        let folder =
            std::env::temp_dir().join(format!("partner-api-notify-{}", std::process::id()));
        std::fs::create_dir_all(&folder).unwrap();
        let path = folder.join("notify");
        let _ = std::fs::remove_file(&path);
        let by_path = UnixDatagram::bind(&path).unwrap();
        let name = format!("partner-api-notify-{}", std::process::id());
        let by_name =
            UnixDatagram::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes()).unwrap())
                .unwrap();
        for (socket, manager) in [
            (path.clone().into_os_string(), &by_path),
            (OsString::from(format!("@{name}")), &by_name),
        ] {
            manager
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            let notifier = Notifier::new(socket_sink(socket.clone()), None);
            notifier.stopping("draining");
            let mut buffer = [0; 256];
            let received = manager.recv(&mut buffer).unwrap();
            assert_eq!(
                &buffer[..received],
                b"STOPPING=1\nSTATUS=draining\n",
                "{socket:?}"
            );
            assert!(!notifier.warned.load(Ordering::Relaxed));
        }
        std::fs::remove_dir_all(&folder).unwrap();
    }

    /// A manager that reads nothing: once its queue is full a notification fails after the
    /// send deadline instead of holding the caller (start-up, the drain, the pings).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_full_socket_fails_the_notification_instead_of_holding_it() {
        use std::os::linux::net::SocketAddrExt;

        let name = format!("partner-api-full-{}", std::process::id());
        let address = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let _manager = UnixDatagram::bind_addr(&address).unwrap();
        let sink = socket_sink(OsString::from(format!("@{name}")));
        let (done, outcome) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            // Bounded: the kernel queues a few hundred datagrams at most.
            let failure =
                (0..100_000).find_map(|_| sink(&[NotifyState::Watchdog], PING_SEND_TIMEOUT).err());
            let _ = done.send(failure.map(|error| error.kind()));
        });
        let kind = outcome
            .recv_timeout(Duration::from_secs(30))
            .expect("the sends end (each within the deadline)");
        assert_eq!(kind, Some(io::ErrorKind::WouldBlock));
    }

    /// READY and STOPPING wait the longer deadline and a refusal of either is logged every
    /// time (in `send_state`, not through `warned`); pings wait the short one and a refusal is
    /// logged once.
    #[test]
    fn each_notification_waits_its_deadline_and_a_refused_ping_is_logged_once() {
        let sent = Arc::new(std::sync::Mutex::new(Vec::new()));
        let record = Arc::clone(&sent);
        let sink: Sink = Arc::new(move |states, deadline| {
            record
                .lock()
                .unwrap()
                .push((states[0].to_string(), deadline));
            Err(io::Error::from(io::ErrorKind::ConnectionRefused))
        });
        let notifier = Notifier::new(sink, None);
        notifier.ready("serving");
        assert!(!notifier.warned.load(Ordering::Relaxed));
        notifier.send(&[NotifyState::Watchdog]);
        assert!(notifier.warned.load(Ordering::Relaxed));
        notifier.stopping("draining");
        assert_eq!(
            *sent.lock().unwrap(),
            [
                ("READY=1".to_owned(), STATE_SEND_TIMEOUT),
                ("WATCHDOG=1".to_owned(), PING_SEND_TIMEOUT),
                ("STOPPING=1".to_owned(), STATE_SEND_TIMEOUT),
            ]
        );
    }

    /// Pings while the worker beats, none while it is stalled (said once in STATUS), pings
    /// again once it beats: in that order.
    #[actix_web::test]
    async fn no_ping_while_a_worker_is_stalled() {
        let watchdog = Watchdog::new(Duration::from_millis(300));
        watchdog.beat_on_this_worker();
        let (notifier, receiver) = recorded(Some(Duration::from_millis(40)));
        let reader = std::thread::spawn(move || {
            let mut messages = Vec::new();
            // Bounded: a ping every 20 ms for about 1.5 s is far fewer than this, and the
            // reading ends 3 s after the last message (longer than the stall's silence).
            for _ in 0..1000 {
                match receiver.recv_timeout(Duration::from_secs(3)) {
                    Ok(message) => {
                        messages.push(message);
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
}
