//! The LISTEN supervisor against a real Postgres: notifications arrive, and a connection the
//! server terminates is re-established and reported as a gap (`connected` again).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use shoal_store::listen::{Subscriber, Supervisor};
use shoal_store::pool::{PoolConfig, connect_lazy};
use shoal_testkit::ScratchDatabase;
use sqlx::Connection;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Event {
    Connected,
    Notified(String),
    Disconnected,
}

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Event>>>);

impl Recorder {
    fn events(&self) -> Vec<Event> {
        self.0.lock().unwrap().clone()
    }

    async fn wait_for(&self, what: &str, done: impl Fn(&[Event]) -> bool) -> anyhow::Result<()> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while !done(&self.events()) {
            anyhow::ensure!(
                tokio::time::Instant::now() < deadline,
                "{what}; got {:?}",
                self.events()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(())
    }
}

impl Subscriber for Recorder {
    fn connected(&mut self) {
        self.0.lock().unwrap().push(Event::Connected);
    }

    fn notified(&mut self, _channel: &str, payload: &str) {
        self.0
            .lock()
            .unwrap()
            .push(Event::Notified(payload.to_owned()));
    }

    fn disconnected(&mut self) {
        self.0.lock().unwrap().push(Event::Disconnected);
    }
}

fn connections(events: &[Event]) -> usize {
    events.iter().filter(|e| **e == Event::Connected).count()
}

#[tokio::test]
async fn reconnects_after_the_server_terminates_the_connection_and_reports_the_gap()
-> anyhow::Result<()> {
    let db = ScratchDatabase::create(&shoal_testkit::admin_url(), "shoal_listen").await?;
    let pool = connect_lazy(db.url(), &PoolConfig::default())?;
    // A channel of its own, so the listening backend can be found by its last query.
    let channel: &'static str = format!("shoal_test_{}", uuid::Uuid::new_v4().simple()).leak();
    let supervisor = Supervisor {
        channels: vec![channel],
        ping_every: None,
        step_timeout: Duration::from_secs(5),
        meanwhile: "nothing",
    };
    let recorder = Recorder::default();
    let stop = CancellationToken::new();
    let task = tokio::spawn({
        let (mut recorder, stop, pool) = (recorder.clone(), stop.clone(), pool.clone());
        async move { supervisor.run(&pool, &mut recorder, &stop).await }
    });
    recorder
        .wait_for("connects", |e| connections(e) == 1)
        .await?;

    sqlx::query("select pg_notify($1, 'first')")
        .bind(channel)
        .execute(&pool)
        .await?;
    recorder
        .wait_for("the notification arrives", |e| {
            e.contains(&Event::Notified("first".into()))
        })
        .await?;

    // As the superuser: the pool's sessions `set role`, which hides other sessions' queries.
    let mut admin = sqlx::PgConnection::connect(db.url()).await?;
    let terminated: Vec<bool> = sqlx::query_scalar(
        "select pg_terminate_backend(pid) from pg_stat_activity \
         where pid <> pg_backend_pid() and query like '%' || $1 || '%'",
    )
    .bind(channel)
    .fetch_all(&mut admin)
    .await?;
    assert_eq!(terminated, vec![true], "one listening connection");
    recorder
        .wait_for("reconnects", |e| connections(e) == 2)
        .await?;
    sqlx::query("select pg_notify($1, 'second')")
        .bind(channel)
        .execute(&pool)
        .await?;
    recorder
        .wait_for("listens again", |e| {
            e.contains(&Event::Notified("second".into()))
        })
        .await?;

    stop.cancel();
    tokio::time::timeout(Duration::from_secs(5), task).await??;
    assert_eq!(
        recorder.events(),
        vec![
            Event::Connected,
            Event::Notified("first".into()),
            Event::Disconnected,
            Event::Connected,
            Event::Notified("second".into()),
            Event::Disconnected,
        ]
    );
    Ok(())
}
