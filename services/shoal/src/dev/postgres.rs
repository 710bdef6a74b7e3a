//! A Postgres cluster private to `shoal dev`, so that `shoal dev` works on a machine where no
//! Postgres is running and no `DATABASE_URL` is set: only the server binaries of the Debian
//! package `postgresql` must be installed.
//!
//! The cluster lives in a data directory chosen by the caller. Its port is chosen once, when the
//! directory is initialised, and remembered in the file `shoal-port` inside it, so the URL stays
//! the same across restarts. Authentication is `trust` and the server listens on 127.0.0.1 only:
//! this is a developer's database, never a production one.
//!
//! `initdb` and `postgres` refuse to run as root; when we are root they run as the `postgres`
//! system user (created if missing) through `runuser`, and the data directory is given to it.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use sqlx::Connection;
use tokio::process::Command;

/// The file in the data directory that remembers the cluster's port.
const PORT_FILE: &str = "shoal-port";
/// The database `shoal dev` uses.
const DATABASE: &str = "shoal";
/// The system user the server runs as when we are root.
const SERVICE_USER: &str = "postgres";
/// How long the server may take to accept connections after `pg_ctl start` returned.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// Unix socket paths longer than this do not fit in `sockaddr_un`; the server then listens on
/// TCP only.
const MAX_SOCKET_DIR_LEN: usize = 90;

/// A Postgres cluster private to `shoal dev`, started from the installed server binaries.
#[derive(Debug)]
pub struct PrivateCluster {
    data_dir: PathBuf,
    port: u16,
    binaries: Binaries,
    run_as: Option<&'static str>,
}

impl PrivateCluster {
    /// Finds initdb/pg_ctl (PATH, then the highest /usr/lib/postgresql/*/bin), initialises
    /// `data_dir` on first use (trust auth, 127.0.0.1 only, a free port chosen and remembered
    /// in the data dir so restarts keep the URL stable), starts it, waits until ready, creates
    /// the database `shoal` if missing.
    pub async fn start(data_dir: &Path) -> Result<PrivateCluster> {
        let binaries = Binaries::find()?;
        let run_as = if running_as_root()? {
            ensure_service_user().await?;
            Some(SERVICE_USER)
        } else {
            None
        };
        std::fs::create_dir_all(data_dir)
            .with_context(|| format!("cannot create {}", data_dir.display()))?;
        let data_dir = data_dir
            .canonicalize()
            .with_context(|| format!("cannot resolve {}", data_dir.display()))?;
        let mut cluster = PrivateCluster {
            data_dir,
            port: 0,
            binaries,
            run_as,
        };
        cluster.settle_data_dir().await?;
        if cluster.data_dir.join("PG_VERSION").exists() {
            cluster.port = cluster.remembered_port()?;
        } else {
            cluster.initialise().await?;
        }
        if !cluster.is_running()? {
            cluster.remove_stale_pid_file()?;
            cluster.start_server().await?;
        }
        cluster.wait_until_ready().await?;
        cluster.create_database_if_missing().await?;
        Ok(cluster)
    }

    /// The URL of the database `shoal` on this cluster.
    pub fn database_url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{DATABASE}", self.port)
    }

    /// Stops the server (`pg_ctl stop -m fast`); stopping a stopped cluster is not an error.
    pub async fn stop(self) -> Result<()> {
        if !self.is_running()? {
            return Ok(());
        }
        let data_dir = self.data_dir_arg()?;
        let output = self
            .command(&self.binaries.pg_ctl)
            .args(["stop", "-D", data_dir, "-m", "fast", "-w", "-t", "60"])
            .output()
            .await
            .context("cannot run pg_ctl stop")?;
        check("pg_ctl stop", &output)
    }

    /// Creates the cluster: initdb, then the settings that keep it private to this machine.
    async fn initialise(&mut self) -> Result<()> {
        let mut entries = std::fs::read_dir(&self.data_dir)
            .with_context(|| format!("cannot read {}", self.data_dir.display()))?;
        if entries.next().is_some() {
            bail!(
                "{} is neither empty nor a Postgres data directory; remove it or choose another",
                self.data_dir.display()
            );
        }
        let data_dir = self.data_dir_arg()?.to_owned();
        let output = self
            .command(&self.binaries.initdb)
            .args(["-D", &data_dir, "--auth=trust", "-U", "postgres"])
            .args(["--encoding=UTF8", "--no-locale"])
            .output()
            .await
            .context("cannot run initdb")?;
        check("initdb", &output)?;

        self.port = free_port()?;
        let socket_dir = if data_dir.len() <= MAX_SOCKET_DIR_LEN {
            data_dir.replace('\'', "''")
        } else {
            String::new()
        };
        let settings = format!(
            "\n# Added by shoal dev: private to this machine.\n\
             listen_addresses = '127.0.0.1'\n\
             port = {}\n\
             unix_socket_directories = '{socket_dir}'\n\
             max_connections = 200\n",
            self.port
        );
        let conf = self.data_dir.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&conf)
            .with_context(|| format!("cannot read {}", conf.display()))?;
        text.push_str(&settings);
        std::fs::write(&conf, text).with_context(|| format!("cannot write {}", conf.display()))?;
        let port_file = self.data_dir.join(PORT_FILE);
        std::fs::write(&port_file, format!("{}\n", self.port))
            .with_context(|| format!("cannot write {}", port_file.display()))?;
        Ok(())
    }

    fn remembered_port(&self) -> Result<u16> {
        let path = self.data_dir.join(PORT_FILE);
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!(
                "{} is a Postgres data directory not created by shoal dev (no {PORT_FILE})",
                self.data_dir.display()
            )
        })?;
        text.trim()
            .parse()
            .with_context(|| format!("{} does not hold a port number", path.display()))
    }

    /// Whether a server runs on this data directory: the PID in `postmaster.pid` is alive and is
    /// a Postgres process (after a reboot the PID may belong to something else, and a killed
    /// server may linger as a zombie).
    fn is_running(&self) -> Result<bool> {
        let Some(pid) = self.postmaster_pid()? else {
            return Ok(false);
        };
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // `pid (comm) state ...`; comm may contain spaces and parentheses.
        let state = stat.rsplit_once(") ").map(|(_, rest)| rest.trim_start());
        let alive = matches!(state, Some(rest) if !rest.starts_with('Z'));
        Ok(alive && (comm.starts_with("postgres") || comm.starts_with("postmaster")))
    }

    fn postmaster_pid(&self) -> Result<Option<u32>> {
        let path = self.data_dir.join("postmaster.pid");
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(text
                .lines()
                .next()
                .and_then(|line| line.trim().parse().ok())),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// The lock files a killed server leaves hold its PID; the next start would refuse to run
    /// while that PID exists, whoever it now belongs to.
    fn remove_stale_pid_file(&self) -> Result<()> {
        let lock_files = [
            "postmaster.pid".to_owned(),
            format!(".s.PGSQL.{}.lock", self.port),
        ];
        for name in lock_files {
            let path = self.data_dir.join(name);
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => {
                    return Err(error).with_context(|| format!("cannot remove {}", path.display()));
                }
            }
        }
        Ok(())
    }

    async fn start_server(&self) -> Result<()> {
        let data_dir = self.data_dir_arg()?;
        let log = self.data_dir.join("server.log");
        let log = log
            .to_str()
            .ok_or_else(|| anyhow!("{} is not valid UTF-8", log.display()))?;
        let output = self
            .command(&self.binaries.pg_ctl)
            .args(["start", "-D", data_dir, "-l", log, "-w", "-t", "60"])
            .output()
            .await
            .context("cannot run pg_ctl start")?;
        check("pg_ctl start", &output).with_context(|| format!("see {log}"))
    }

    async fn wait_until_ready(&self) -> Result<()> {
        let url = self.admin_url();
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            match sqlx::PgConnection::connect(&url).await {
                Ok(connection) => {
                    let _ = connection.close().await;
                    return Ok(());
                }
                Err(error) if Instant::now() >= deadline => {
                    return Err(error).with_context(|| {
                        format!(
                            "Postgres in {} did not accept connections on port {} within {:?}",
                            self.data_dir.display(),
                            self.port,
                            READY_TIMEOUT
                        )
                    });
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    }

    async fn create_database_if_missing(&self) -> Result<()> {
        let mut connection = sqlx::PgConnection::connect(&self.admin_url()).await?;
        let exists: bool =
            sqlx::query_scalar("select exists (select from pg_database where datname = $1)")
                .bind(DATABASE)
                .fetch_one(&mut connection)
                .await?;
        if !exists {
            sqlx::query("create database shoal")
                .execute(&mut connection)
                .await
                .context("cannot create the database")?;
        }
        connection.close().await?;
        Ok(())
    }

    fn admin_url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    fn data_dir_arg(&self) -> Result<&str> {
        self.data_dir
            .to_str()
            .ok_or_else(|| anyhow!("{} is not valid UTF-8", self.data_dir.display()))
    }

    /// When we are root, the data directory must belong to the service user, and the service
    /// user must be able to reach it. A directory under /root is out of its reach: the cluster
    /// then lives in /var/tmp instead, in a directory named after the requested one so that
    /// every start finds it again.
    async fn settle_data_dir(&mut self) -> Result<()> {
        let Some(user) = self.run_as else {
            return Ok(());
        };
        let ids = user_ids(user).await?;
        if self.give_to_service_user(&self.data_dir, ids).await? {
            return Ok(());
        }
        let fallback = PathBuf::from(format!(
            "/var/tmp/shoal-postgres-{:016x}",
            fnv1a(self.data_dir.as_os_str().as_encoded_bytes())
        ));
        std::fs::create_dir_all(&fallback)
            .with_context(|| format!("cannot create {}", fallback.display()))?;
        std::fs::set_permissions(&fallback, std::fs::Permissions::from_mode(0o700))?;
        if !self.give_to_service_user(&fallback, ids).await? {
            bail!(
                "the `{user}` user can reach neither {} nor {}; choose a data directory it can reach",
                self.data_dir.display(),
                fallback.display()
            );
        }
        tracing::info!(
            requested = %self.data_dir.display(),
            data_dir = %fallback.display(),
            "the `{user}` user cannot reach the requested Postgres data directory; using another"
        );
        self.data_dir = fallback;
        Ok(())
    }

    /// Chowns `dir` to the service user; whether that user can then write to it.
    async fn give_to_service_user(&self, dir: &Path, (uid, gid): (u32, u32)) -> Result<bool> {
        std::os::unix::fs::chown(dir, Some(uid), Some(gid))
            .with_context(|| format!("cannot give {} to the service user", dir.display()))?;
        let output = self
            .command(Path::new("test"))
            .arg("-w")
            .arg(dir)
            .output()
            .await
            .context("cannot run runuser")?;
        Ok(output.status.success())
    }

    /// A command run as the service user when we are root, with a working directory every user
    /// can enter (the caller's may be closed to the service user).
    fn command(&self, program: &Path) -> Command {
        let mut command = match self.run_as {
            Some(user) => {
                let mut command = Command::new("runuser");
                command.args(["-u", user, "--"]).arg(program);
                command
            }
            None => Command::new(program),
        };
        command.current_dir("/").stdin(std::process::Stdio::null());
        command
    }
}

/// The server binaries of one Postgres installation.
#[derive(Debug)]
struct Binaries {
    initdb: PathBuf,
    pg_ctl: PathBuf,
}

impl Binaries {
    /// `initdb` and `pg_ctl` from PATH, else from the highest /usr/lib/postgresql/*/bin (Debian
    /// does not put them on PATH).
    fn find() -> Result<Binaries> {
        if let (Some(initdb), Some(pg_ctl)) = (on_path("initdb"), on_path("pg_ctl")) {
            return Ok(Binaries { initdb, pg_ctl });
        }
        let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| {
                let version = entry.file_name().to_str()?.parse().ok()?;
                let bin = entry.path().join("bin");
                (bin.join("initdb").is_file() && bin.join("pg_ctl").is_file())
                    .then_some((version, bin))
            })
            .collect();
        versions.sort();
        match versions.pop() {
            Some((_, bin)) => Ok(Binaries {
                initdb: bin.join("initdb"),
                pg_ctl: bin.join("pg_ctl"),
            }),
            None => bail!(
                "Postgres server binaries not found: install the Debian package `postgresql` \
                 (or set DATABASE_URL to an existing database)"
            ),
        }
    }
}

/// The program's absolute path on PATH, symlinks resolved: `pg_ctl` finds `postgres` beside
/// its own real location.
fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
        .and_then(|candidate| candidate.canonicalize().ok())
}

fn running_as_root() -> Result<bool> {
    use std::os::unix::fs::MetadataExt;
    // /proc/self belongs to the process's effective user.
    let metadata = std::fs::metadata("/proc/self").context("cannot read /proc/self")?;
    Ok(metadata.uid() == 0)
}

async fn ensure_service_user() -> Result<()> {
    let known = Command::new("id")
        .args(["-u", SERVICE_USER])
        .output()
        .await
        .context("cannot run id")?;
    if known.status.success() {
        return Ok(());
    }
    let output = Command::new("useradd")
        .args(["--system", "--user-group", "--no-create-home", "--shell"])
        .args(["/usr/sbin/nologin", SERVICE_USER])
        .output()
        .await
        .context("cannot run useradd")?;
    check("useradd postgres", &output)
}

async fn user_ids(user: &str) -> Result<(u32, u32)> {
    let mut ids = [0u32; 2];
    for (flag, id) in ["-u", "-g"].into_iter().zip(ids.iter_mut()) {
        let output = Command::new("id")
            .args([flag, user])
            .output()
            .await
            .context("cannot run id")?;
        check("id", &output)?;
        *id = String::from_utf8_lossy(&output.stdout)
            .trim()
            .parse()
            .with_context(|| format!("`id {flag} {user}` did not print a number"))?;
    }
    Ok((ids[0], ids[1]))
}

/// A port nobody listens on right now. Another process could take it before Postgres binds it;
/// the start then fails with a clear message in the server log, and the next run picks anew
/// only if the data directory is removed, which keeps the URL stable in the common case.
fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("cannot find a free port")?;
    Ok(listener.local_addr()?.port())
}

/// FNV-1a: a hash that, unlike std's, stays the same across Rust releases.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn check(what: &str, output: &Output) -> Result<()> {
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let detail = if stderr.trim().is_empty() {
        stdout.trim()
    } else {
        stderr.trim()
    };
    bail!("{what} failed ({}): {detail}", output.status)
}
