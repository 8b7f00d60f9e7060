//! The built binary as an operator runs it: bad settings, `--help`, the healthcheck
//! subcommand, the startup and access log lines, and graceful shutdown on SIGTERM/SIGINT.
//! Every process started here is stopped by its PID, and every wait is bounded.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::tls::TestPki;

const BINARY: &str = env!("CARGO_BIN_EXE_partner-api");
const WAIT: Duration = Duration::from_secs(10);

/// The binary with no `PARTNER_API_*` settings inherited from the test environment.
fn partner_api() -> Command {
    let mut command = Command::new(BINARY);
    // Nor the service manager's socket, when the tests themselves run under one.
    for name in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] {
        command.env_remove(name);
    }
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("PARTNER_API_") {
            command.env_remove(name);
        }
    }
    // The admin listener on a free port (the default one may be taken by a parallel test) and
    // no shutdown delay, unless a test asks otherwise with a flag.
    command
        .env("RUST_LOG", "info")
        .env("PARTNER_API_ADMIN_BIND", "127.0.0.1:0")
        .env("PARTNER_API_SHUTDOWN_DELAY_SECS", "0")
        .stdin(Stdio::null());
    command
}

fn run(command: &mut Command) -> Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + WAIT;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("{command:?} did not finish within {WAIT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

/// A server process on a free loopback port, its stderr lines readable as they come.
struct ServerProcess {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
    address: SocketAddr,
    /// The admin listener's address, unless it is off.
    admin: Option<SocketAddr>,
}

/// The child's stderr, line by line as it comes, read on a thread of its own.
fn stderr_lines(child: &mut Child) -> mpsc::Receiver<String> {
    let stderr = child.stderr.take().unwrap();
    let (sender, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

impl ServerProcess {
    fn start(extra_args: &[&str]) -> ServerProcess {
        ServerProcess::start_with_env(extra_args, &[])
    }

    fn start_with_env(extra_args: &[&str], environment: &[(&str, &str)]) -> ServerProcess {
        let mut child = partner_api()
            .envs(environment.iter().copied())
            .args([
                "--bind",
                "127.0.0.1:0",
                "--workers",
                "1",
                "--shutdown-grace-secs",
                "5",
            ])
            .args(extra_args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = stderr_lines(&mut child);
        let mut server = ServerProcess {
            child,
            lines,
            seen: Vec::new(),
            address: "0.0.0.0:0".parse().unwrap(),
            admin: None,
        };
        let line = server.wait_for_line(" listening on ");
        let address = line
            .split("://")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap();
        server.address = address.parse().unwrap();
        server.admin = line
            .split("admin (probes, metrics) on http://")
            .nth(1)
            .map(|rest| rest.split(['"', ' ']).next().unwrap().parse().unwrap());
        server
    }

    /// Every stderr line, once the process has closed stderr (it exited).
    fn all_lines(&mut self) -> Vec<String> {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(mpsc::RecvTimeoutError::Disconnected) => return self.seen.clone(),
                Err(mpsc::RecvTimeoutError::Timeout) => panic!("stderr still open after {WAIT:?}"),
            }
        }
    }

    /// The first stderr line containing `needle`, waiting at most `WAIT`.
    fn wait_for_line(&mut self, needle: &str) -> String {
        if let Some(line) = self.seen.iter().find(|line| line.contains(needle)) {
            return line.clone();
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(needle) {
                        return line;
                    }
                }
                Err(_) => panic!("no log line with {needle:?}; saw {:?}", self.seen),
            }
        }
    }

    fn signal(&self, signal: libc::c_int) {
        let pid = libc::pid_t::try_from(self.child.id()).unwrap();
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    }

    fn wait_for_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not exit within {WAIT:?}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends a raw HTTP/1.1 request and returns the whole answer (the request asks to close).
fn raw_request(address: SocketAddr, request: &str) -> String {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

fn request_id_of(answer: &str) -> &str {
    answer
        .lines()
        .find_map(|line| line.strip_prefix("service-request-id: "))
        .unwrap()
        .trim()
}

#[test]
fn a_bad_setting_is_one_line_naming_it_with_exit_code_2() {
    // (flags, environment, the setting the error line must name)
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let cases: [Case; 12] = [
        (&["--bind", "nowhere"], &[], "--bind"),
        (
            &[],
            &[("PARTNER_API_BIND", "localhost")],
            "PARTNER_API_BIND",
        ),
        (&[], &[("PARTNER_API_WORKERS", "0")], "PARTNER_API_WORKERS"),
        (&["--max-body-bytes", "0"], &[], "--max-body-bytes"),
        (
            &["--public-url", "ftp://docs"],
            &[],
            "PARTNER_API_PUBLIC_URL",
        ),
        (&["--no-such-setting"], &[], "--no-such-setting"),
        // The former name is still read, and refused the same way when bad.
        (
            &[],
            &[("PARTNER_API_DOCS_BASE_URL", "ftp://docs")],
            "PARTNER_API_DOCS_BASE_URL",
        ),
        (
            &["--public-url", "https://user:secret@api.example.test"],
            &[],
            "user name or password",
        ),
        // A certificate without its key names the key.
        (
            &["--tls-cert", "cert.pem"],
            &[],
            "--tls-key <PATH> (setting PARTNER_API_TLS_KEY)",
        ),
        // The admin listener on the API's port, the same address or every address.
        (
            &[
                "--bind",
                "127.0.0.1:18080",
                "--admin-bind",
                "127.0.0.1:18080",
            ],
            &[],
            "--admin-bind 127.0.0.1:18080 (setting PARTNER_API_ADMIN_BIND) takes the port of \
             --bind 127.0.0.1:18080",
        ),
        (
            &[],
            &[
                ("PARTNER_API_BIND", "127.0.0.1:18080"),
                ("PARTNER_API_ADMIN_BIND", "0.0.0.0:18080"),
            ],
            "PARTNER_API_ADMIN_BIND",
        ),
        // The shipped configurations' placeholder public URL, left as it is.
        (
            &[],
            &[(
                "PARTNER_API_PUBLIC_URL",
                "https://partner-api.example.invalid",
            )],
            "--public-url (PARTNER_API_PUBLIC_URL) https://partner-api.example.invalid is a \
             placeholder (a name under .invalid never resolves): set it to the URL partners \
             use",
        ),
    ];
    for (args, envs, named) in cases {
        let output = run(partner_api().args(args).envs(envs.iter().copied()));
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?} {envs:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with("error: "), "{stderr}");
        assert!(stderr.contains(named), "{named} not named in {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// An audit trail that cannot be a trail stops the start at once, naming it: a FIFO nobody
/// reads used to hang the start in `open()` before the service listened, with no line at all.
#[test]
fn an_audit_log_that_is_no_regular_file_is_refused_at_start_with_exit_code_2() {
    let folder = std::env::temp_dir().join(format!("audit-targets-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).unwrap();
    let fifo = folder.join("audit.fifo");
    let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path this test owns.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    let unwritable = folder.join("no-such-folder").join("audit.jsonl");
    for (target, why) in [
        (fifo.clone(), "it is a FIFO"),
        (folder.clone(), "it is a folder"),
        (std::path::PathBuf::from("/dev/null"), "it is a device"),
        (unwritable.clone(), "No such file or directory"),
    ] {
        let output = run(partner_api()
            .args(["--bind", "127.0.0.1:0", "--audit-log"])
            .arg(&target));
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(output.status.code(), Some(2), "{target:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        let expected = format!(
            "--audit-log {} (setting PARTNER_API_AUDIT_LOG): cannot use it: {why}",
            target.display()
        );
        assert!(stderr.contains(&expected), "{expected} not in {stderr}");
    }
    std::fs::remove_dir_all(&folder).unwrap();
}

#[test]
fn help_documents_every_setting() {
    let output = run(partner_api().arg("--help"));
    assert_eq!(output.status.code(), Some(0));
    let help = String::from_utf8(output.stdout).unwrap();
    for name in [
        "PARTNER_API_BIND",
        "PARTNER_API_PUBLIC_URL",
        "PARTNER_API_WORKERS",
        "PARTNER_API_SHUTDOWN_GRACE_SECS",
        "PARTNER_API_MAX_BODY_BYTES",
        "PARTNER_API_KEEP_ALIVE_SECS",
        "PARTNER_API_REQUEST_HEAD_TIMEOUT_MS",
        "healthcheck",
    ] {
        assert!(help.contains(name), "{name} missing from --help");
    }
}

#[test]
fn healthcheck_succeeds_against_a_running_service() {
    let server = ServerProcess::start(&[]);
    let url = format!("http://{}", server.address);
    let output = run(partner_api().args(["healthcheck", "--url", &url]));
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        format!("healthy: GET {url}/v1/ping answered 200 with pong true\n")
    );
    // The ping's own URL, as monitors are configured with, is probed as it is.
    let ping_url = format!("{url}/v1/ping");
    let output = run(partner_api().args(["healthcheck", "--url", &ping_url]));
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        format!("healthy: GET {url}/v1/ping answered 200 with pong true\n")
    );
    // Without --url it probes the configured bind address; the shipped image's placeholder
    // public URL, which only the server refuses, does not stop a probe.
    let output = run(partner_api()
        .arg("healthcheck")
        .env("PARTNER_API_BIND", server.address.to_string())
        .env(
            "PARTNER_API_PUBLIC_URL",
            "https://partner-api.example.invalid",
        ));
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn healthcheck_fails_with_one_line_saying_why() {
    let server = ServerProcess::start(&[]);
    let closed_port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("http://{}", silent.local_addr().unwrap());
    let cases = [
        (
            vec!["--url".to_owned(), format!("http://{closed_port}")],
            format!(
                "unhealthy: GET http://{closed_port}/v1/ping: cannot connect to {closed_port}: "
            ),
        ),
        (
            vec![
                "--url".to_owned(),
                format!("http://{}/elsewhere", server.address),
            ],
            format!(
                "unhealthy: GET http://{}/elsewhere/v1/ping: answered \"HTTP/1.1 404 Not Found\"",
                server.address
            ),
        ),
        (
            vec![
                "--url".to_owned(),
                silent_url.clone(),
                "--timeout".to_owned(),
                "0.3".to_owned(),
            ],
            format!("unhealthy: GET {silent_url}/v1/ping: "),
        ),
    ];
    for (args, expected_start) in cases {
        let output = run(partner_api().arg("healthcheck").args(&args));
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&expected_start),
            "{stderr:?} vs {expected_start:?}"
        );
    }
}

#[test]
fn access_log_line_carries_the_request_id() {
    let mut server = ServerProcess::start(&[]);
    let answer = raw_request(
        server.address,
        "GET /v1/ping HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n",
    );
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    let id = request_id_of(&answer).to_owned();
    let line = server.wait_for_line(&id);
    assert!(line.contains("INFO  access]"), "{line}");
    assert!(
        line.contains(&format!("{id} 127.0.0.1 \"GET /v1/ping\" 200 ")),
        "{line}"
    );
}

/// SIGTERM and SIGINT both stop accepting, let the in-flight request finish, and exit 0.
#[test]
fn a_signal_drains_in_flight_requests_then_exits_0() {
    for (signal, name) in [(libc::SIGTERM, "SIGTERM"), (libc::SIGINT, "SIGINT")] {
        let mut server = ServerProcess::start(&[]);
        // A request whose body is still arriving when the signal comes.
        let mut in_flight = TcpStream::connect(server.address).unwrap();
        in_flight.set_read_timeout(Some(WAIT)).unwrap();
        in_flight
            .write_all(
                b"GET /v1/ping HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n\
                  Content-Length: 2\r\nConnection: close\r\n\r\n{",
            )
            .unwrap();
        // A complete request answered on the same single worker: the one above was read first.
        let answer = raw_request(
            server.address,
            "GET /v1/ping HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n",
        );
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");

        server.signal(signal);
        server.wait_for_line(&format!("{name} received"));
        in_flight.write_all(b"}").unwrap();
        let mut answer = String::new();
        in_flight.read_to_string(&mut answer).unwrap();
        assert!(
            answer.starts_with("HTTP/1.1 200 OK\r\n"),
            "{name}: {answer}"
        );
        assert!(
            answer.ends_with(r#"{"object":"ping","pong":true}"#),
            "{answer}"
        );

        let status = server.wait_for_exit();
        assert_eq!(status.code(), Some(0), "{name}");
        server.wait_for_line("stopped");
    }
}

#[test]
fn a_bad_certificate_or_key_is_one_line_with_exit_code_2() {
    let pki = TestPki::new("startup");
    let other = TestPki::new("startup-other");
    let missing = pki.dir.join("missing.pem");
    let path = |path: &std::path::Path| path.to_str().unwrap().to_owned();
    let cases = [
        (
            path(&missing),
            path(&pki.key_path),
            format!("cannot read {}", path(&missing)),
        ),
        (
            path(&pki.cert_path),
            path(&other.key_path),
            format!(
                "the private key in {} does not belong to the certificate in {}",
                path(&other.key_path),
                path(&pki.cert_path)
            ),
        ),
        (
            path(&pki.key_path),
            path(&pki.cert_path),
            format!("{} holds no PEM certificate", path(&pki.key_path)),
        ),
    ];
    // A certificate outside its validity, which every client would refuse.
    let expired = TestPki::new("startup-expired");
    let now = crate::tls::unix_now();
    expired.issue_valid(now - 86_400 * 30, now - 86_400);
    let mut cases = cases.to_vec();
    cases.push((
        path(&expired.cert_path),
        path(&expired.key_path),
        format!(
            "the certificate in {} expired at ",
            path(&expired.cert_path)
        ),
    ));
    let early = TestPki::new("startup-early");
    early.issue_valid(now + 86_400, now + 86_400 * 30);
    cases.push((
        path(&early.cert_path),
        path(&early.key_path),
        format!(
            "the certificate in {} is not valid before ",
            path(&early.cert_path)
        ),
    ));
    for (cert, key, expected) in cases {
        let output = run(partner_api().args([
            "--bind",
            "127.0.0.1:0",
            "--tls-cert",
            &cert,
            "--tls-key",
            &key,
        ]));
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!("error: {expected}")),
            "{stderr:?}"
        );
    }
    // A certificate without its key is refused by the command line itself.
    let output = run(partner_api().args(["--tls-cert", &path(&pki.cert_path)]));
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn https_service_passes_the_healthcheck_and_rotates_on_sighup() {
    let pki = TestPki::new("sighup");
    let (cert, key, ca) = (
        pki.cert_path.to_str().unwrap(),
        pki.key_path.to_str().unwrap(),
        pki.ca_path.to_str().unwrap(),
    );
    let mut server = ServerProcess::start(&[
        "--tls-cert",
        cert,
        "--tls-key",
        key,
        "--tls-watch-secs",
        "0",
    ]);
    server.wait_for_line("listening on https://");
    let url = format!("https://localhost:{}", server.address.port());
    let loopback_url = format!("https://127.0.0.1:{}", server.address.port());

    let verified = run(partner_api().args(["healthcheck", "--url", &url, "--ca-file", ca]));
    assert_eq!(verified.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(verified.stdout).unwrap(),
        format!(
            "healthy: GET {url}/v1/ping answered 200 with pong true (certificate verified against {ca})\n"
        )
    );
    let unverified = run(partner_api().args([
        "healthcheck",
        "--url",
        &loopback_url,
        "--insecure-localhost",
    ]));
    assert_eq!(unverified.status.code(), Some(0));
    assert!(
        String::from_utf8(unverified.stdout)
            .unwrap()
            .ends_with("(certificate NOT verified: --insecure-localhost)\n")
    );
    // Not trusted by the public roots: one line saying why, exit 1.
    let untrusted = run(partner_api().args(["healthcheck", "--url", &url]));
    let stderr = String::from_utf8(untrusted.stderr).unwrap();
    assert_eq!(untrusted.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("UnknownIssuer"), "{stderr}");

    pki.issue();
    server.signal(libc::SIGHUP);
    server.wait_for_line("TLS certificate reloaded (SIGHUP)");
    let after = run(partner_api().args(["healthcheck", "--url", &url, "--ca-file", ca]));
    assert_eq!(after.status.code(), Some(0));
}

const CONFIGURATION: &str = include_str!("../../docs/operations/configuration.md");

/// The first line of a code block of the operators' configuration guide that starts with
/// `prefix`.
fn readme_line(prefix: &str) -> &'static str {
    CONFIGURATION
        .lines()
        .find(|line| line.starts_with(prefix))
        .unwrap_or_else(|| {
            panic!("docs/operations/configuration.md has no line starting with {prefix:?}")
        })
}

/// The container HEALTHCHECK of the configuration guide, run exactly as written (the image keeps the
/// binary at `/partner-api`; the container's environment configures the service it checks),
/// against a plain and an HTTPS service.
#[test]
fn the_readme_healthcheck_command_passes_against_a_running_service() {
    let exec_form = readme_line("HEALTHCHECK ")
        .split_once(" CMD ")
        .expect("HEALTHCHECK ... CMD [...]")
        .1;
    let argv: Vec<String> = serde_json::from_str(exec_form).expect("CMD is the exec form");
    assert_eq!(argv[0], "/partner-api");
    let plain = ServerProcess::start(&[]);
    let output = run(partner_api()
        .args(&argv[1..])
        .env("PARTNER_API_BIND", plain.address.to_string()));
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let pki = TestPki::new("healthcheck-recipe");
    let (cert, key) = (
        pki.cert_path.to_str().unwrap(),
        pki.key_path.to_str().unwrap(),
    );
    let https = ServerProcess::start(&["--tls-cert", cert, "--tls-key", key]);
    let output = run(partner_api()
        .args(&argv[1..])
        .env("PARTNER_API_BIND", https.address.to_string())
        .env("PARTNER_API_TLS_CERT", cert)
        .env("PARTNER_API_TLS_KEY", key));
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        format!(
            "healthy: GET https://{}/v1/ping answered 200 with pong true (certificate NOT \
             verified: --insecure-localhost)\n",
            https.address
        )
    );
}

/// The uptime monitor's HEAD request of the configuration guide, run as written but for the
/// port.
#[test]
fn the_readme_uptime_command_passes_against_a_running_service() {
    let server = ServerProcess::start(&[]);
    let command = readme_line("curl --max-time 5 --head ")
        .replace("127.0.0.1:8080", &server.address.to_string());
    let output = run(Command::new("sh").args(["-c", &command]));
    assert_eq!(output.status.code(), Some(0), "{command}: {output:?}");
    let head = String::from_utf8(output.stdout).unwrap();
    assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
}

/// `GET <path>` on the admin listener: the status line and body.
fn admin_get(server: &ServerProcess, path: &str) -> (String, String) {
    let answer = raw_request(
        server.admin.expect("the admin listener is on"),
        &format!("GET {path} HTTP/1.1\r\nHost: admin\r\nConnection: close\r\n\r\n"),
    );
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    (head.lines().next().unwrap().to_owned(), body.to_owned())
}

fn ping(server: &ServerProcess) -> String {
    raw_request(
        server.address,
        "GET /v1/ping HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n",
    )
}

/// SIGTERM: /readyz turns 503 at once while the API keeps answering new connections for the
/// delay; then the service drains and exits 0.
#[test]
fn sigterm_turns_readiness_off_and_serves_through_the_delay() {
    let mut server = ServerProcess::start(&["--shutdown-delay-secs", "2"]);
    assert_eq!(
        admin_get(&server, "/readyz"),
        ("HTTP/1.1 200 OK".to_owned(), "ready\n".to_owned())
    );
    let signalled = Instant::now();
    server.signal(libc::SIGTERM);
    server.wait_for_line("SIGTERM received: not ready; serving 2 s more");
    assert_eq!(
        admin_get(&server, "/readyz"),
        (
            "HTTP/1.1 503 Service Unavailable".to_owned(),
            "shutting down\n".to_owned()
        )
    );
    assert_eq!(admin_get(&server, "/livez").0, "HTTP/1.1 200 OK");
    // The metrics say the replica left rotation, and why.
    let metrics = admin_get(&server, "/metrics").1;
    let readiness: Vec<&str> = metrics
        .lines()
        .filter(|line| {
            line.starts_with("partner_api_ready") || line.starts_with("partner_api_not_ready{")
        })
        .collect();
    assert_eq!(
        readiness,
        [
            "partner_api_ready 0",
            r#"partner_api_not_ready{reason="worker_stalled"} 0"#,
            r#"partner_api_not_ready{reason="certificate_expired"} 0"#,
            r#"partner_api_not_ready{reason="shutting_down"} 1"#,
        ]
    );
    let answer = ping(&server);
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    server.wait_for_line("no longer accepting");
    assert!(signalled.elapsed() >= Duration::from_secs(2));
    assert_eq!(server.wait_for_exit().code(), Some(0));
    server.wait_for_line("stopped");
}

/// A second signal during the delay drains at once.
#[test]
fn a_second_signal_skips_the_delay() {
    let mut server = ServerProcess::start(&["--shutdown-delay-secs", "600"]);
    server.signal(libc::SIGTERM);
    server.wait_for_line("SIGTERM received: not ready");
    server.signal(libc::SIGINT);
    server.wait_for_line("SIGINT received again");
    assert_eq!(server.wait_for_exit().code(), Some(0));
}

/// With `--log-format json` every line a run writes is one JSON object: startup, access lines
/// (with their fields, and the trace id of a well-formed traceparent), shutdown.
#[test]
fn json_logs_are_one_object_per_line() {
    let mut server = ServerProcess::start(&["--log-format", "json"]);
    let traced = raw_request(
        server.address,
        "GET /v1/ping HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\
         traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\n\r\n",
    );
    let traced_id = request_id_of(&traced).to_owned();
    let malformed = raw_request(
        server.address,
        "GET /nowhere HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\
         traceparent: 00-not-a-trace-01\r\n\r\n",
    );
    assert!(malformed.starts_with("HTTP/1.1 404 "), "{malformed}");
    let malformed_id = request_id_of(&malformed).to_owned();
    server.wait_for_line(&malformed_id);
    server.signal(libc::SIGTERM);
    assert_eq!(server.wait_for_exit().code(), Some(0));

    let lines = server.all_lines();
    assert!(lines.len() >= 5, "{lines:?}");
    let objects: Vec<serde_json::Value> = lines
        .iter()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|error| panic!("not JSON ({error}): {line}"))
        })
        .collect();
    for object in &objects {
        for key in ["time", "level", "target", "message"] {
            assert!(object[key].is_string(), "{key} missing: {object}");
        }
        let time = object["time"].as_str().unwrap();
        assert!(time.ends_with('Z') && time.len() == 27, "{time}");
    }
    assert!(objects.iter().any(|object| {
        object["message"]
            .as_str()
            .unwrap()
            .contains(" listening on ")
    }));
    assert!(objects.iter().any(|object| object["message"] == "stopped"));
    let access = |id: &str| {
        objects
            .iter()
            .find(|object| object["request_id"] == id)
            .unwrap_or_else(|| panic!("no access line for {id}: {lines:?}"))
            .clone()
    };
    let mut traced = access(&traced_id);
    assert!(traced["duration_us"].is_u64(), "{traced}");
    for key in ["time", "message", "duration_us"] {
        traced.as_object_mut().unwrap().remove(key);
    }
    assert_eq!(
        traced,
        serde_json::json!({
            "level": "INFO",
            "target": "access",
            "request_id": traced_id,
            "client": "127.0.0.1",
            "method": "GET",
            "path": "/v1/ping",
            "status": 200,
            "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
        })
    );
    let untraced = access(&malformed_id);
    assert_eq!(untraced["status"], 404);
    assert_eq!(untraced["path"], "/nowhere");
    assert!(untraced.get("trace_id").is_none(), "{untraced}");
}

/// The text access line names the partner's trace too.
#[test]
fn a_traceparent_names_the_trace_in_the_text_access_line() {
    let mut server = ServerProcess::start(&[]);
    let answer = raw_request(
        server.address,
        "GET /v1/ping HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\
         traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\n\r\n",
    );
    let id = request_id_of(&answer).to_owned();
    let line = server.wait_for_line(&id);
    assert!(
        line.contains(&format!("{id} 127.0.0.1 \"GET /v1/ping\" 200 ")),
        "{line}"
    );
    assert!(
        line.ends_with("us trace=4bf92f3577b34da6a3ce929d0e0e4736"),
        "{line}"
    );
}

/// Every numeric setting (its value is a number: `N`, `SECS`, `MS` or `BYTES`) tried with 0, a
/// very large value and a malformed one: each either stops the start with one line naming the
/// setting and exit code 2, or starts a service that answers pings over HTTP/1.1 (twice on one
/// keep-alive connection) and HTTP/2, and logs no panic. A value out of a setting's range once
/// started and then panicked every worker (`--keep-alive-secs 10000000000000000000`).
#[test]
fn every_numeric_setting_has_a_range_or_works() {
    use clap::CommandFactory;
    let command = partner_api::server::config::Cli::command();
    let numeric: Vec<(String, String)> = command
        .get_arguments()
        .filter(|argument| {
            argument.get_value_names().is_some_and(|names| {
                names
                    .iter()
                    .any(|name| ["N", "SECS", "MS", "BYTES"].contains(&name.as_str()))
            })
        })
        .map(|argument| {
            let env = argument.get_env().unwrap().to_string_lossy().into_owned();
            (format!("--{}", argument.get_long().unwrap()), env)
        })
        .collect();
    assert!(numeric.len() >= 15, "{numeric:?}");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // HTTPS, since HTTP/2 is spoken over TLS only.
    let pki = TestPki::new("numeric-settings");
    let (cert, key) = (
        pki.cert_path.to_str().unwrap(),
        pki.key_path.to_str().unwrap(),
    );
    let ca = reqwest::Certificate::from_pem(&std::fs::read(&pki.ca_path).unwrap()).unwrap();
    for (flag, env) in &numeric {
        for value in ["0", "10000000000000000000", "12x"] {
            let mut child = partner_api()
                .args(["--bind", "127.0.0.1:0", "--shutdown-grace-secs", "2"])
                .args(["--tls-cert", cert, "--tls-key", key])
                .args([flag.as_str(), value])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let lines = stderr_lines(&mut child);
            // Its lines until it says where it listens, or until it exits (stderr closes).
            let deadline = Instant::now() + WAIT;
            let mut seen = Vec::new();
            let listening = loop {
                let left = deadline.saturating_duration_since(Instant::now());
                match lines.recv_timeout(left) {
                    Ok(line) if line.contains(" listening on ") => break Some(line),
                    Ok(line) => seen.push(line),
                    Err(mpsc::RecvTimeoutError::Disconnected) => break None,
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        let _ = child.kill();
                        panic!("{flag} {value}: neither started nor exited: {seen:?}");
                    }
                }
            };
            let Some(first) = listening else {
                let status = child.wait().unwrap();
                assert_eq!(status.code(), Some(2), "{flag} {value}: {seen:?}");
                assert_eq!(seen.len(), 1, "{flag} {value}: not one line: {seen:?}");
                let line = &seen[0];
                assert!(line.starts_with("error: "), "{flag} {value}: {line}");
                assert!(
                    line.contains(flag.as_str()) && line.contains(env.as_str()),
                    "{flag} {value}: the line names neither: {line}"
                );
                continue;
            };
            seen.push(first.clone());
            let mut server = ServerProcess {
                child,
                lines,
                seen,
                address: "0.0.0.0:0".parse().unwrap(),
                admin: None,
            };
            server.address = first
                .split("://")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .unwrap()
                .parse()
                .unwrap();
            let base = format!("https://localhost:{}", server.address.port());
            runtime.block_on(async {
                partner_api::edge::tls::install_provider();
                let client = |http1_only: bool| {
                    let builder = reqwest::Client::builder()
                        .no_proxy()
                        .use_rustls_tls()
                        .tls_built_in_root_certs(false)
                        .add_root_certificate(ca.clone())
                        .resolve("localhost", server.address);
                    if http1_only {
                        builder.http1_only()
                    } else {
                        builder.http2_prior_knowledge()
                    }
                    .build()
                    .unwrap()
                };
                let (http1, http2) = (client(true), client(false));
                for (name, client) in [
                    ("HTTP/1.1", &http1),
                    ("HTTP/1.1", &http1),
                    ("HTTP/2", &http2),
                ] {
                    let response =
                        tokio::time::timeout(WAIT, client.get(format!("{base}/v1/ping")).send())
                            .await
                            .unwrap_or_else(|_| panic!("{flag} {value}: {name} ping timed out"))
                            .unwrap_or_else(|error| panic!("{flag} {value}: {name} ping: {error}"));
                    assert_eq!(response.status(), 200, "{flag} {value} over {name}");
                    assert_eq!(
                        response.text().await.unwrap(),
                        r#"{"object":"ping","pong":true}"#,
                        "{flag} {value} over {name}"
                    );
                }
            });
            server.signal(libc::SIGTERM);
            let status = server.wait_for_exit();
            let lines = server.all_lines();
            assert!(
                !lines.iter().any(|line| line.contains("panicked")),
                "{flag} {value}: {lines:?}"
            );
            assert!(status.success(), "{flag} {value}: {status:?} {lines:?}");
        }
    }
}

/// SIGHUP never stops the service, TLS or not: a plain instance had no handler, so systemd's
/// `ExecReload` (which sends SIGHUP) ended it with status 129, no drain and no log line. Now it
/// says there is nothing to reload and serves on; then SIGTERM still drains and exits 0.
#[test]
fn sighup_never_stops_a_plain_instance() {
    let mut server = ServerProcess::start(&["--shutdown-delay-secs", "0"]);
    for _ in 0..2 {
        server.signal(libc::SIGHUP);
        std::thread::sleep(Duration::from_millis(200));
        assert!(
            server.child.try_wait().unwrap().is_none(),
            "the process exited on SIGHUP"
        );
    }
    server.wait_for_line("SIGHUP received: nothing to reload");
    assert!(ping(&server).starts_with("HTTP/1.1 200 OK\r\n"));
    server.signal(libc::SIGTERM);
    assert_eq!(server.wait_for_exit().code(), Some(0));
}

/// Under systemd's `Type=notify`, on a real datagram socket: READY=1 naming the process once
/// it listens, WATCHDOG=1 every half of WATCHDOG_USEC, STOPPING=1 as SIGTERM starts the drain.
#[test]
fn systemd_hears_ready_watchdog_pings_and_stopping() {
    let folder = std::env::temp_dir().join(format!("partner-api-notify-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).unwrap();
    let path = folder.join("notify");
    let socket = std::os::unix::net::UnixDatagram::bind(&path).unwrap();
    socket.set_read_timeout(Some(WAIT)).unwrap();
    let mut server = ServerProcess::start_with_env(
        &[],
        &[
            ("NOTIFY_SOCKET", path.to_str().unwrap()),
            ("WATCHDOG_USEC", "200000"),
        ],
    );
    let receive = || {
        let mut buffer = [0; 512];
        let length = socket
            .recv(&mut buffer)
            .expect("a notification within WAIT");
        String::from_utf8(buffer[..length].to_vec()).unwrap()
    };
    // Bounded: pings come every 100 ms; READY comes first or right after the first pings.
    let ready = (0..50)
        .map(|_| receive())
        .find(|message| message != "WATCHDOG=1\n")
        .unwrap();
    assert_eq!(
        ready,
        format!(
            "READY=1\nSTATUS=serving on {}\nMAINPID={}\n",
            server.address,
            server.child.id()
        )
    );
    assert_eq!(receive(), "WATCHDOG=1\n");
    assert_eq!(receive(), "WATCHDOG=1\n");
    server.signal(libc::SIGTERM);
    let stopping = (0..50)
        .map(|_| receive())
        .find(|message| message != "WATCHDOG=1\n")
        .unwrap();
    assert_eq!(stopping, "STOPPING=1\nSTATUS=SIGTERM received: draining\n");
    assert_eq!(server.wait_for_exit().code(), Some(0));
    std::fs::remove_dir_all(&folder).unwrap();
}

/// The operator's `keys` commands, as the binary runs them: `issue` prints the key alone on
/// stdout (and keeps only its digest), `list` shows ids and states and never a key, `revoke`
/// marks it; a bad argument exits 2 with one line. A server started with the file reloads it on
/// SIGHUP, and refuses at start a file that is not a key file (exit 2, one line).
#[test]
fn keys_are_issued_listed_revoked_and_reloaded_on_sighup() {
    let folder = crate::helpers::work_folder("keys-binary");
    let file = folder.join("keys.json");
    let file_arg = file.to_str().unwrap();
    let issued = run(partner_api().args([
        "keys",
        "issue",
        "--keys-file",
        file_arg,
        "--partner",
        "pt_acme",
        "--scope",
        "things:read",
        "--expires",
        "2099-01-01",
    ]));
    assert!(issued.status.success(), "{issued:?}");
    let key = String::from_utf8(issued.stdout).unwrap();
    let key = key.trim_end_matches('\n');
    assert!(key.starts_with("pak_") && key.len() == 42, "{key}");
    let note = String::from_utf8(issued.stderr).unwrap();
    assert!(
        note.contains(" to pt_acme with things:read, expiring 2099-01-01T00:00:00Z"),
        "{note}"
    );
    assert!(!std::fs::read_to_string(&file).unwrap().contains(key));
    let listed = run(partner_api().args(["keys", "list", "--keys-file", file_arg]));
    let listed = String::from_utf8(listed.stdout).unwrap();
    let id = listed
        .lines()
        .nth(1)
        .unwrap()
        .split('\t')
        .next()
        .unwrap()
        .to_owned();
    assert!(
        listed.lines().nth(1).unwrap().ends_with("\tactive"),
        "{listed}"
    );
    assert!(!listed.contains(key));

    let mut server = ServerProcess::start(&["--keys-file", file_arg]);
    let revoked = run(partner_api().args(["keys", "revoke", "--keys-file", file_arg, &id]));
    assert!(revoked.status.success(), "{revoked:?}");
    server.signal(libc::SIGHUP);
    server.wait_for_line("keys reloaded (SIGHUP): 1 in the file");
    let listed = run(partner_api().args(["keys", "list", "--keys-file", file_arg]));
    assert!(
        String::from_utf8(listed.stdout)
            .unwrap()
            .contains("\trevoked ")
    );
    server.signal(libc::SIGTERM);
    assert_eq!(server.wait_for_exit().code(), Some(0));

    let again = run(partner_api().args(["keys", "revoke", "--keys-file", file_arg, &id]));
    assert_eq!(again.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(again.stderr).unwrap(),
        format!("partner-api keys: {id} was revoked already, at {}\n", {
            let file = partner_api::auth::store::KeyFile::read(&file).unwrap();
            file.keys[0].revoked.clone().unwrap()
        })
    );
    std::fs::write(&file, "{\"keys\": [").unwrap();
    let refused = run(partner_api().args(["--bind", "127.0.0.1:0", "--keys-file", file_arg]));
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8(refused.stderr).unwrap();
    assert!(
        stderr.contains(&format!(
            "--keys-file: the key file {file_arg} is not a key file: it is not valid JSON"
        )),
        "{stderr}"
    );
    std::fs::remove_dir_all(&folder).unwrap();
}
