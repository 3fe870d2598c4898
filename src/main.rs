//! The `errand` binary: `serve`, `migrate`, `token`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use errand::config::Settings;
use errand::domain::tokens::TokenFor;
use errand::jobs::HandlerRegistry;
use errand::startup::Application;
use errand::store::Store;
use secrecy::ExposeSecret;

/// `0.1.0 (3dac1ba5e0f1)`: the release and the commit it was built from (`build.rs`).
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("ERRAND_GIT_COMMIT"), ")");

#[derive(Parser)]
#[command(version = VERSION, about = "Durable, idempotent, tenant-scoped jobs for heavy user-initiated work")]
struct Cli {
    /// The configuration file; `ERRAND_SECTION__KEY` variables override it.
    #[arg(long, global = true, env = "ERRAND_CONFIG", default_value = "config.toml")]
    config: PathBuf,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the service (migrates first).
    Serve,
    /// Apply database migrations and exit.
    Migrate {
        /// Apply nothing: exit 0 when the database has exactly this build's
        /// migrations, 1 when it lacks some (listed), 2 when it has some this
        /// build does not know (a newer errand migrated it).
        #[arg(long, conflicts_with = "print_sql")]
        check: bool,
        /// Apply nothing: print the SQL of this build's migrations, for a
        /// migration tool of your own (no database or configuration needed).
        #[arg(long)]
        print_sql: bool,
        /// With `--print-sql`: only the migrations after this version.
        #[arg(long, requires = "print_sql", default_value_t = 0)]
        from: i64,
    },
    /// The configuration.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// The keys that seal secrets at rest (`[encryption] keys`).
    Keys {
        #[command(subcommand)]
        command: KeysCommand,
    },
    /// Web Push (`[push]`).
    Push {
        #[command(subcommand)]
        command: PushCommand,
    },
    /// Demo data for the shipped export job types.
    Demo {
        #[command(subcommand)]
        command: DemoCommand,
    },
    /// Print a signed API token for local use: a tenant's user's, or with
    /// `--operator` an operator's (for `/admin`, across tenants), `--worker`
    /// an external worker's, `--service` a backend service's.
    Token(TokenArgs),
}

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("typed").args(["worker", "service"])))]
struct TokenArgs {
    #[arg(long, required_unless_present_any = ["operator", "worker", "service"])]
    tenant: Option<String>,
    /// Who: the user, operator, worker or service (`--name` says the same).
    #[arg(long, visible_alias = "name")]
    user: String,
    #[arg(long)]
    email: Option<String>,
    /// How long the token is valid, e.g. `1h`, `30m`.
    #[arg(long, default_value = "1h", value_parser = humantime::parse_duration)]
    ttl: Duration,
    /// Print a sign-in link instead (to the demo page, or with
    /// `--operator` to the operators' console at `/admin`): the token
    /// rides in the URL's `#fragment`, which browsers never send to a
    /// server, so it stays out of every access log.
    #[arg(long, conflicts_with_all = ["worker", "service"])]
    link: bool,
    /// A tenant admin's token (`scope: tenant_admin`): a user who may also
    /// manage the tenant's webhooks.
    #[arg(long, requires = "tenant", conflicts_with_all = ["operator", "worker", "service"])]
    tenant_admin: bool,
    /// An operator's token (`scope: operator`): no tenant, the `/admin` routes only.
    #[arg(long, conflicts_with_all = ["tenant", "email", "worker", "service"])]
    operator: bool,
    /// With `--operator`: one who may only look (`scope: operator:read`):
    /// every action route answers 403.
    #[arg(long, requires = "operator")]
    read_only: bool,
    /// With `--operator`: one who also sees what job types redact
    /// (`redact` in config; scope `operator:sensitive`).
    #[arg(long, requires = "operator")]
    sensitive: bool,
    /// An external worker's token (`scope: worker`), for the `/worker/v1` routes only.
    #[arg(long, requires = "types", conflicts_with_all = ["tenant", "email", "service"])]
    worker: bool,
    /// A backend service's token (`scope: service`): it starts and reads
    /// jobs for a tenant's user named in `Errand-On-Behalf-Of: tenant/user`.
    #[arg(long, conflicts_with_all = ["tenant", "email"])]
    service: bool,
    /// The job types a worker token may take, or a service token start
    /// (any when a service's is absent), e.g. `render_invoice,send_batch`.
    #[arg(long, value_delimiter = ',', requires = "typed")]
    types: Vec<String>,
    /// With `--service`: the tenants whose users it may act for (any when absent).
    #[arg(long, value_delimiter = ',', requires = "service")]
    tenants: Vec<String>,
}

impl TokenArgs {
    /// Whose token these arguments ask for.
    fn kind(&self) -> TokenFor {
        let name = self.user.clone();
        let listed = |list: &Vec<String>| (!list.is_empty()).then(|| list.clone());
        if self.operator {
            let scope = match (self.read_only, self.sensitive) {
                (false, false) => "operator",
                (true, false) => "operator:read",
                (false, true) => "operator operator:sensitive",
                (true, true) => "operator:read operator:sensitive",
            };
            TokenFor::Operator { name, scope }
        } else if self.worker {
            TokenFor::Worker { name, types: self.types.clone() }
        } else if self.service {
            TokenFor::Service { name, types: listed(&self.types), tenants: listed(&self.tenants) }
        } else {
            TokenFor::User {
                // clap requires a tenant unless --operator, --worker or --service.
                tenant: self.tenant.clone().unwrap_or_default(),
                user: name,
                email: self.email.clone(),
                scope: self.tenant_admin.then(|| "tenant_admin".into()),
            }
        }
    }
}

#[derive(Subcommand)]
enum KeysCommand {
    /// Rewraps every tenant's data key under the first of `encryption.keys`
    /// (after putting a new key first), and seals webhook secrets still in
    /// clear. Safe to run again, and beside running errand processes.
    Rotate,
}

#[derive(Subcommand)]
enum ConfigCommand {
    /// Check a configuration file and the environment without starting:
    /// every problem found, each naming its key (exit 2), or a summary
    /// (exit 0). No database is needed.
    Check,
}

#[derive(Subcommand)]
enum PushCommand {
    /// Print a new VAPID key pair, as `[push]` settings: errand's identity
    /// to push services. Keep the private key secret; changing the pair
    /// makes every device subscribe again.
    Keys,
}

#[derive(Subcommand)]
enum DemoCommand {
    /// Create and fill the `sales` and `creator_earnings` tables (tenants `demo-1` … `demo-N`).
    Seed {
        #[arg(long, default_value_t = 2)]
        tenants: u32,
        /// Rows per tenant in each table.
        #[arg(long, default_value_t = 10_000)]
        rows: u64,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A key pair needs nothing else: no configuration is read.
    if let Command::Push { command: PushCommand::Keys } = &cli.command {
        return exit_code(push_keys());
    }
    if let Command::Migrate { print_sql: true, from, .. } = &cli.command {
        return print_migrations(*from);
    }
    if let Command::Config { command: ConfigCommand::Check } = &cli.command {
        return check_config(&cli.config);
    }
    // A token needs only the secret: from the environment it works in any
    // directory, without a configuration file.
    // (A link also needs `http.public_base_url`: it reads the configuration.)
    if let Command::Token(args) = &cli.command
        && !args.link
        && let Ok(secret) = std::env::var("ERRAND_AUTH__JWT_SECRET")
    {
        return exit_code(args.kind().mint(&secret, args.ttl).map(|t| println!("{t}")).map_err(Into::into));
    }
    let settings = match Settings::load(&cli.config) {
        Ok(settings) => settings,
        Err(error) => {
            eprintln!("errand: {error}");
            if matches!(cli.command, Command::Token(_)) {
                eprintln!(
                    "errand: a token needs the JWT secret: set ERRAND_AUTH__JWT_SECRET, or pass --config with \
                     the path of errand's config.toml"
                );
            }
            return ExitCode::from(2);
        }
    };
    // Kept to the end: dropping it exports the spans still buffered.
    let _traces = match errand::telemetry::init(settings.log.format) {
        Ok(exporter) => exporter,
        Err(error) => {
            eprintln!("errand: {error}");
            return ExitCode::from(2);
        }
    };
    if let Command::Migrate { check: true, .. } = &cli.command {
        return actix_web::rt::System::new().block_on(check_schema(settings));
    }
    exit_code(run(cli.command, settings))
}

/// Runs `command` (a token without a configuration file was made before).
fn run(command: Command, settings: Settings) -> Result<(), AnyError> {
    match command {
        Command::Serve => actix_web::rt::System::new().block_on(serve(settings)),
        Command::Migrate { .. } => actix_web::rt::System::new().block_on(migrate(settings)),
        // Answered before the configuration was loaded (see `main`).
        Command::Config { .. } => Ok(()),
        Command::Keys { command: KeysCommand::Rotate } => actix_web::rt::System::new().block_on(rotate(settings)),
        Command::Push { command: PushCommand::Keys } => push_keys(),
        Command::Demo { command: DemoCommand::Seed { tenants, rows } } => {
            actix_web::rt::System::new().block_on(seed(settings, tenants, rows))
        }
        Command::Token(args) => {
            // Where a sign-in link goes: the operators' console, or the demo page.
            let page = if args.operator { "/admin" } else { "/" };
            let token = args.kind().mint(settings.auth.jwt_secret.expose_secret(), args.ttl)?;
            if args.link {
                println!("{}#token={token}", settings.http.public_base_url.join_path(page));
            } else {
                println!("{token}");
            }
            Ok(())
        }
    }
}

fn exit_code(result: Result<(), AnyError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("errand: {error}");
            ExitCode::FAILURE
        }
    }
}

type AnyError = Box<dyn std::error::Error>;

/// Prints a new VAPID key pair as the `[push]` settings that hold it.
fn push_keys() -> Result<(), AnyError> {
    let (public, private) = errand::domain::keys::vapid::VapidKey::generate()?;
    println!("# errand's VAPID key pair, for [push] (the private key is a secret: keep it out of version control)");
    println!("vapid_public_key = \"{public}\"");
    println!("vapid_private_key = \"{private}\"");
    Ok(())
}

async fn serve(settings: Settings) -> Result<(), AnyError> {
    let app = Application::build(settings, HandlerRegistry::builtin()).await?;
    // A plain line on stdout, for scripts and tests that start errand on port 0.
    println!("errand listening on {}", app.address());
    app.run_until(shutdown_signal()).await?;
    Ok(())
}

async fn migrate(settings: Settings) -> Result<(), AnyError> {
    let store = Store::connect(settings.database.url.expose_secret(), 2)?;
    let owner_url = settings.database.migration_url.as_ref().map(|url| url.expose_secret());
    let applied = errand::store::migrations::migrate_as(&store, owner_url).await?;
    println!("applied {applied} migration(s)");
    Ok(())
}

/// `errand migrate --check`: 0 current, 1 behind (what is pending listed), 2 ahead.
async fn check_schema(settings: Settings) -> ExitCode {
    use errand::store::migrations::{SchemaStanding, schema_standing, version_names as versions};
    let standing = match Store::connect(settings.database.url.expose_secret(), 1) {
        Ok(store) => schema_standing(&store).await.map_err(AnyError::from),
        Err(error) => Err(error.into()),
    };
    match standing {
        Ok(SchemaStanding::Current) => {
            println!("the database has this build's migrations");
            ExitCode::SUCCESS
        }
        Ok(SchemaStanding::Behind(pending)) => {
            println!("the database lacks {} of this build's migrations: {}", pending.len(), versions(&pending));
            ExitCode::from(1)
        }
        Ok(SchemaStanding::Ahead(unknown)) => {
            println!("the database has migrations this build does not know (a newer errand's): {}", versions(&unknown));
            ExitCode::from(2)
        }
        Err(error) => {
            eprintln!("errand: {error}");
            ExitCode::FAILURE
        }
    }
}

/// `errand migrate --print-sql`: this build's migrations after `from`, each headed by its name.
fn print_migrations(from: i64) -> ExitCode {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    for migration in errand::store::migrations::migrations_after(from) {
        let (version, name, sql) = (migration.version, &migration.name, migration.sql.trim_end());
        // A reader that stopped early (`| head`) is no error of errand's.
        if writeln!(out, "-- V{version}__{name}.sql\n{sql}").is_err() {
            break;
        }
    }
    ExitCode::SUCCESS
}

/// `errand config check`: the file at `path` and the environment, checked
/// as `serve` checks them (export queries aside: they are read when their
/// types are built), each problem printed with its key.
fn check_config(path: &std::path::Path) -> ExitCode {
    let settings = match Settings::read(path) {
        Ok(settings) => settings,
        Err(error) => {
            eprintln!("errand: {error}");
            return ExitCode::from(2);
        }
    };
    let mut problems: Vec<String> = settings.problems().iter().map(ToString::to_string).collect();
    problems.extend(HandlerRegistry::builtin().unknown_handlers(&settings.job_types));
    if problems.is_empty() {
        println!("{}: valid; {} job type(s)", path.display(), settings.job_types.len());
        return ExitCode::SUCCESS;
    }
    for problem in &problems {
        eprintln!("errand: {problem}");
    }
    ExitCode::from(2)
}

async fn rotate(settings: Settings) -> Result<(), AnyError> {
    let ring = settings.keyring().map_err(|why| format!("encryption.keys: {why}"))?;
    let current = ring.current().to_owned();
    let store = Store::connect(settings.database.url.expose_secret(), 2)?.with_keyring(ring);
    let (rewrapped, sealed) = store.rotate_keys().await?;
    println!("rewrapped {rewrapped} data key(s) under {current}; sealed {sealed} webhook secret(s) kept in clear");
    Ok(())
}

async fn seed(settings: Settings, tenants: u32, rows: u64) -> Result<(), AnyError> {
    let store = Store::connect(settings.database.url.expose_secret(), 2)?;
    let added = errand::store::demo::seed(&store, tenants, rows).await?;
    println!("added {added} rows to sales and to creator_earnings (tenants demo-1 to demo-{tenants})");
    Ok(())
}

/// Resolves on SIGTERM or SIGINT.
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    let mut int = signal(SignalKind::interrupt()).expect("SIGINT handler");
    tokio::select! {
        _ = term.recv() => {},
        _ = int.recv() => {},
    }
}
