//! partner-api exactly as production builds it (same flags, same logging), plus two test-only
//! routes: `GET /test/panic`, whose handler panics (`scripts/soak` floods it to show that
//! panics neither slow the ping path more than ordinary load does nor leak), and
//! `GET /test/block/{ms}`, whose handler blocks its worker's thread for that long
//! (`scripts/check-faults` shows the watchdog turn `/livez` to 503 while it does). Not a
//! product binary: it exists for those checks only.

use actix_web::get;
use partner_api::observability::logging;
use partner_api::server::config::Cli;
use partner_api::server::startup::{Application, Extension};
use utoipa_actix_web::service_config::ServiceConfig;

/// Panics, every time.
#[utoipa::path(responses((status = 500, description = "never answers")))]
#[get("/test/panic")]
async fn panics() -> actix_web::HttpResponse {
    panic!("soak test panic")
}

/// Blocks the worker's thread for `ms` milliseconds (at most a minute), as a handler stuck on
/// a lock or a synchronous call would.
#[utoipa::path(responses((status = 200, description = "after the wait")))]
#[get("/test/block/{ms}")]
async fn blocks(ms: actix_web::web::Path<u64>) -> actix_web::HttpResponse {
    std::thread::sleep(std::time::Duration::from_millis(
        ms.into_inner().min(60_000),
    ));
    actix_web::HttpResponse::Ok().finish()
}

fn test_routes(config: &mut ServiceConfig) {
    config.service(panics).service(blocks);
}

fn main() -> std::io::Result<()> {
    let cli = Cli::parse_or_exit();
    logging::init(cli.server.log_format, cli.server.log_when_stalled);
    let served = actix_web::rt::System::new().block_on(async {
        let extension = |_: &_| Ok(Extension::none().with_framework_routes(test_routes));
        let application =
            Application::build_with(&cli.server, extension).map_err(std::io::Error::other)?;
        log::info!(
            "soak server listening on http://{}",
            application.local_addr()
        );
        application.run_until_stopped().await
    });
    partner_api::observability::log_sink::finish(std::time::Duration::from_secs(2));
    served
}
