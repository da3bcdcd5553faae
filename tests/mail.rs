//! Alerts reach a real SMTP server (python3 aiosmtpd on loopback): one alert as it is,
//! several as one digest, held by the hourly limit, kept and retried while the server is
//! down, and a runner's failure mailed end to end.

mod common;

use common::fixture::{self, ADDQ, JOBRUNNER};
use common::smtp::{SmtpServer, free_port};
use nowdb::mail::{self, Delivery, MailConfig, Security, Transport};
use std::time::{Duration, Instant};

fn config(port: u16, max_per_hour: u32) -> MailConfig {
    MailConfig {
        transport: Transport::Smtp,
        from: "nowdb <nowdb@localhost>".into(),
        to: vec!["operator@localhost".into()],
        server: Some("127.0.0.1".into()),
        port: Some(port),
        security: Security::None,
        user: None,
        password_file: None,
        sendmail: None,
        dir: None,
        max_per_hour,
    }
}

#[test]
fn alerts_are_sent_digested_limited_and_retried_while_the_server_is_down() {
    let site = fixture::scratch("mail", "deliver");
    let port = free_port();
    let server = SmtpServer::start(&site.join("maildir"), port);
    let cfg = config(port, 3);
    let now = 1_800_000_000;

    mail::alert(&site, "h1", "job failed: cap 2200.--", "the details").unwrap();
    assert_eq!(mail::deliver(&site, &cfg, now).unwrap(), Delivery::Sent(1));
    let got = server.messages();
    assert_eq!(got.len(), 1);
    assert!(
        got[0].contains("Subject: [nowdb h1] job failed: cap 2200.--"),
        "{}",
        got[0]
    );
    assert!(got[0].contains("the details"));
    assert_eq!(mail::deliver(&site, &cfg, now).unwrap(), Delivery::Empty);

    // The server goes away: alerts stay in the outbox, the error says so, nothing is lost.
    server.stop();
    mail::alert(&site, "h2", "host h2 crashed", "a").unwrap();
    mail::alert(&site, "h2", "host h2 is back", "b").unwrap();
    let e = mail::deliver(&site, &cfg, now + 60)
        .unwrap_err()
        .to_string();
    assert!(e.contains("2 alert(s)") && e.contains("next try"), "{e}");
    assert_eq!(
        std::fs::read_dir(mail::outbox_dir(&site)).unwrap().count(),
        2
    );

    // It comes back: both go out as one digest.
    let server = SmtpServer::start(&site.join("maildir"), port);
    assert_eq!(
        mail::deliver(&site, &cfg, now + 120).unwrap(),
        Delivery::Sent(2)
    );
    let got = server.messages();
    let digest = got.iter().find(|m| m.contains("2 alerts")).expect("digest");
    assert!(digest.contains("host h2 crashed") && digest.contains("host h2 is back"));

    // The hourly limit (3): a third mail goes, a fourth waits, and leaves an hour later.
    mail::alert(&site, "h3", "flap 1", "").unwrap();
    assert_eq!(
        mail::deliver(&site, &cfg, now + 180).unwrap(),
        Delivery::Sent(1)
    );
    mail::alert(&site, "h3", "flap 2", "").unwrap();
    mail::alert(&site, "h3", "flap 3", "").unwrap();
    assert_eq!(
        mail::deliver(&site, &cfg, now + 240).unwrap(),
        Delivery::Held(2)
    );
    assert_eq!(server.messages().len(), 3);
    assert_eq!(
        mail::deliver(&site, &cfg, now + 3700).unwrap(),
        Delivery::Sent(2)
    );
    assert_eq!(server.messages().len(), 4);
    let _ = std::fs::remove_dir_all(&site);
}

#[test]
fn a_held_job_is_mailed_once_by_its_runner() {
    let site = fixture::scratch("mail", "runner");
    let port = free_port();
    let server = SmtpServer::start(&site.join("maildir"), port);
    std::fs::write(
        site.join("hosts.toml"),
        format!(
            "[[host]]\nname = \"w1\"\nssh = \"w1\"\nqueue = \"p\"\nplatform = \"x86_64-linux\"\nmemory_mb = 64\n\n\
             [mail]\ntransport = \"smtp\"\nsecurity = \"none\"\nserver = \"127.0.0.1\"\nport = {port}\n\
             from = \"nowdb@localhost\"\nto = [\"operator@localhost\"]\n\n\
             [jobs]\nmax_attempts = 2\nretry_backoff_secs = 1\n"
        ),
    )
    .unwrap();
    std::fs::create_dir_all(site.join("solved")).unwrap();
    for s in ["1100.--", "0011.00"] {
        std::fs::write(site.join(format!("solved/{s}.nwk")), b"not a work file").unwrap();
    }
    fixture::ok(ADDQ, &site, &["p", "build", "1100"]);
    let out = fixture::run(
        JOBRUNNER,
        &site,
        &[
            "daemon",
            "--host",
            "w1",
            "--until-empty",
            "--poll-secs",
            "0.2",
        ],
    );
    assert!(!out.status.success());
    // The delivery runs beside the runner: wait for it.
    let deadline = Instant::now() + Duration::from_secs(20);
    let got = loop {
        let got = server.messages();
        if !got.is_empty() || Instant::now() > deadline {
            break got;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(got.len(), 1, "{}", fixture::stderr(&out));
    let mail = got[0].replace("=\r\n", "").replace("\r\n", "\n");
    assert!(mail.contains("job held: build 1100.--"), "{mail}");
    assert!(mail.contains("attempt 2 on w1"), "{mail}");
    assert!(mail.contains("--release 1100.--/build-r0-0-"), "{mail}");
    // Once: nothing more arrives.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(server.messages().len(), 1);
    let _ = std::fs::remove_dir_all(&site);
}
