//! The `[mail]` table of `hosts.toml` and sending one mail through it with lettre.
//!
//! ```toml
//! [mail]
//! transport = "smtp"            # smtp, sendmail or file
//! from = "nowdb <nowdb@example.org>"
//! to = ["operator@example.org"]
//! server = "smtp.example.org"   # smtp
//! port = 587                    # default: 587 starttls, 465 tls, 25 none
//! security = "starttls"         # starttls, tls or none
//! user = "nowdb"                # optional login ...
//! password_file = "/etc/nowdb/smtp-password"   # ... with the password in this file
//! sendmail = "/usr/sbin/sendmail"             # sendmail: the program
//! dir = "mail/sent-files"       # file: where .eml files go (relative to the site)
//! max_per_hour = 12             # more alerts wait and leave as one digest
//! ```

use super::MailError;
use crate::files::{FileOp, failed};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    Smtp,
    Sendmail,
    File,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Security {
    #[default]
    Starttls,
    Tls,
    None,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MailConfig {
    pub transport: Transport,
    pub from: String,
    pub to: Vec<String>,
    #[serde(default)]
    pub server: Option<String>,
    #[serde(default)]
    pub port: Option<u16>,
    #[serde(default)]
    pub security: Security,
    #[serde(default)]
    pub user: Option<String>,
    #[serde(default)]
    pub password_file: Option<PathBuf>,
    #[serde(default)]
    pub sendmail: Option<PathBuf>,
    #[serde(default)]
    pub dir: Option<PathBuf>,
    #[serde(default = "twelve")]
    pub max_per_hour: u32,
}

fn twelve() -> u32 {
    12
}

impl MailConfig {
    /// Checks the table; errors name the field.
    pub fn validate(&self) -> Result<(), MailError> {
        let bad = |field: &'static str, problem: String| MailError::Config { field, problem };
        self.from
            .parse::<lettre::message::Mailbox>()
            .map_err(|e| bad("from", format!("{:?}: {e}", self.from)))?;
        if self.to.is_empty() {
            return Err(bad("to", "no recipient".into()));
        }
        for t in &self.to {
            t.parse::<lettre::message::Mailbox>()
                .map_err(|e| bad("to", format!("{t:?}: {e}")))?;
        }
        match self.transport {
            Transport::Smtp if self.server.as_deref().unwrap_or("").is_empty() => {
                return Err(bad("server", "the smtp transport needs a server".into()));
            }
            Transport::File if self.dir.is_none() => {
                return Err(bad("dir", "the file transport needs a directory".into()));
            }
            _ => {}
        }
        if self.user.is_some() != self.password_file.is_some() {
            return Err(bad(
                "user",
                "give both user and password_file, or neither".into(),
            ));
        }
        if self.max_per_hour == 0 {
            return Err(bad("max_per_hour", "must be at least 1".into()));
        }
        Ok(())
    }
}

/// Sends one plain-text mail to every recipient.
pub fn send(cfg: &MailConfig, site: &Path, subject: &str, body: &str) -> Result<(), MailError> {
    use lettre::Transport as _;
    let mut b = lettre::Message::builder()
        .from(
            cfg.from
                .parse()
                .map_err(|e| MailError::Message(format!("from: {e}")))?,
        )
        .subject(subject);
    for t in &cfg.to {
        b = b.to(t
            .parse()
            .map_err(|e| MailError::Message(format!("to {t}: {e}")))?);
    }
    let msg = b
        .header(lettre::message::header::ContentType::TEXT_PLAIN)
        .body(body.to_string())
        .map_err(|e| MailError::Message(e.to_string()))?;
    match cfg.transport {
        Transport::Smtp => {
            use lettre::SmtpTransport;
            let server = cfg.server.as_deref().unwrap_or_default();
            let port = cfg.port.unwrap_or(match cfg.security {
                Security::Starttls => 587,
                Security::Tls => 465,
                Security::None => 25,
            });
            let smtp = |e: lettre::transport::smtp::Error| MailError::Transport {
                via: format!("smtp {server}:{port}"),
                problem: e.to_string(),
            };
            let builder = match cfg.security {
                Security::None => SmtpTransport::builder_dangerous(server),
                Security::Starttls => SmtpTransport::starttls_relay(server).map_err(smtp)?,
                Security::Tls => SmtpTransport::relay(server).map_err(smtp)?,
            };
            let mut builder = builder.port(port).timeout(Some(Duration::from_secs(10)));
            if let (Some(user), Some(pw)) = (&cfg.user, &cfg.password_file) {
                let password =
                    std::fs::read_to_string(pw).map_err(|source| MailError::Password {
                        path: pw.clone(),
                        source,
                    })?;
                builder =
                    builder.credentials(lettre::transport::smtp::authentication::Credentials::new(
                        user.clone(),
                        password.trim_end().to_string(),
                    ));
            }
            builder.build().send(&msg).map(|_| ()).map_err(smtp)
        }
        Transport::Sendmail => {
            let program = cfg
                .sendmail
                .clone()
                .unwrap_or_else(|| PathBuf::from("/usr/sbin/sendmail"));
            lettre::SendmailTransport::new_with_command(program.as_os_str())
                .send(&msg)
                .map_err(|e| MailError::Transport {
                    via: program.display().to_string(),
                    problem: e.to_string(),
                })
        }
        Transport::File => {
            let dir = site.join(cfg.dir.as_deref().unwrap_or(Path::new("mail/files")));
            std::fs::create_dir_all(&dir)
                .map_err(|e| MailError::File(failed(FileOp::Creating, &dir, e)))?;
            lettre::FileTransport::new(&dir)
                .send(&msg)
                .map(|_| ())
                .map_err(|e| MailError::Transport {
                    via: format!("writing the mail into {}", dir.display()),
                    problem: e.to_string(),
                })
        }
    }
}
