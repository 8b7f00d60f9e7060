//! partner-api exactly as production builds it (same flags, same logging), plus one test-only
//! route, `GET /test/panic`, whose handler panics. `scripts/soak` floods it to show that
//! panics neither slow the ping path more than ordinary load does nor leak. Not a product
//! binary: it exists for that check only.

use actix_web::get;
use partner_api::observability::logging;
use partner_api::server::config::Cli;
use partner_api::server::startup::Application;
use utoipa_actix_web::service_config::ServiceConfig;

/// Panics, every time.
#[utoipa::path(responses((status = 500, description = "never answers")))]
#[get("/test/panic")]
async fn panics() -> actix_web::HttpResponse {
    panic!("soak test panic")
}

fn panic_route(config: &mut ServiceConfig) {
    config.service(panics);
}

fn main() -> std::io::Result<()> {
    let cli = Cli::parse_or_exit();
    logging::init(cli.server.log_format);
    actix_web::rt::System::new().block_on(async {
        let application = Application::build_with_routes(&cli.server, panic_route)
            .map_err(std::io::Error::other)?;
        log::info!(
            "soak server listening on http://{}",
            application.local_addr()
        );
        application.run_until_stopped().await
    })
}
