//! Debian's headless Chromium driven over the DevTools protocol (a WebSocket of JSON
//! commands): open a page, run a script in it, click at an element's place and type as a
//! user does (input events, not DOM calls), take screenshots, and collect what the page
//! logs to its console.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tungstenite::WebSocket;
use tungstenite::stream::MaybeTlsStream;

/// Debian's chromium, which `scripts/test` installs.
pub const CHROMIUM: &str = "/usr/bin/chromium";

/// A browser with one page.
pub struct Browser {
    child: Child,
    ws: WebSocket<MaybeTlsStream<TcpStream>>,
    next_id: u64,
    /// Console messages of level error and uncaught exceptions, as text.
    pub errors: Vec<String>,
}

impl Browser {
    /// Starts chromium with its own profile in `profile` and a `width`x`height` window.
    pub fn start(profile: &Path, width: u32, height: u32) -> Browser {
        assert!(
            Path::new(CHROMIUM).exists(),
            "{CHROMIUM} is missing: scripts/test installs it (apt-get install chromium)"
        );
        let mut child = Command::new(CHROMIUM)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--remote-debugging-port=0",
                &format!("--window-size={width},{height}"),
                &format!("--user-data-dir={}", profile.display()),
                "about:blank",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let err = BufReader::new(child.stderr.take().unwrap());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in err.lines().map_while(Result::ok) {
                if let Some(url) = line.split("DevTools listening on ").nth(1) {
                    let _ = tx.send(url.trim().to_string());
                }
            }
        });
        let browser_url = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("chromium printed no DevTools address");
        // The page target, from the browser's HTTP endpoint beside its WebSocket.
        let host = browser_url
            .trim_start_matches("ws://")
            .split('/')
            .next()
            .unwrap()
            .to_string();
        let page_of = |host: &str| -> Option<String> {
            let list = super::http::Client::connect(host).get("/json/list").ok()?;
            list.json()
                .as_array()?
                .iter()
                .find(|t| t["type"] == "page")
                .and_then(|t| t["webSocketDebuggerUrl"].as_str().map(String::from))
        };
        let mut page = None;
        for _ in 0..100 {
            page = page_of(&host);
            if page.is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let page = page.expect("chromium has no page");
        let (ws, _) = tungstenite::connect(page.as_str()).unwrap();
        let mut b = Browser {
            child,
            ws,
            next_id: 0,
            errors: Vec::new(),
        };
        b.call("Runtime.enable", json!({}));
        b.call("Page.enable", json!({}));
        b
    }

    /// Sends a command and waits for its result; events that come meanwhile are read for
    /// console errors.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let msg = json!({"id": id, "method": method, "params": params}).to_string();
        self.ws.send(tungstenite::Message::text(msg)).unwrap();
        loop {
            let m = self.ws.read().unwrap();
            let Ok(text) = m.to_text() else { continue };
            let v: Value = serde_json::from_str(text).unwrap();
            if v["id"] == id {
                if let Some(e) = v.get("error") {
                    panic!("{method}: {e}");
                }
                return v["result"].clone();
            }
            self.event(&v);
        }
    }

    fn event(&mut self, v: &Value) {
        match v["method"].as_str() {
            Some("Runtime.consoleAPICalled") if v["params"]["type"] == "error" => {
                self.errors.push(v["params"]["args"].to_string())
            }
            Some("Runtime.exceptionThrown") => self
                .errors
                .push(v["params"]["exceptionDetails"].to_string()),
            _ => {}
        }
    }

    pub fn navigate(&mut self, url: &str) {
        self.call("Page.navigate", json!({ "url": url }));
    }

    /// The value of `expression` in the page (promises awaited).
    pub fn eval(&mut self, expression: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        );
        if let Some(e) = r.get("exceptionDetails") {
            panic!("{expression}: {e}");
        }
        r["result"]["value"].clone()
    }

    /// Waits until `expression` is true in the page (one that throws is not yet true).
    pub fn wait_for(&mut self, expression: &str, what: &str) {
        // Until the page has loaded, its elements may not exist: an exception is "not yet".
        let guarded = format!(
            "(() => {{ try {{ return ({expression}) === true; }} catch (e) {{ return false; }} }})()"
        );
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(20) {
            if self.eval(&guarded) == Value::Bool(true) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "waited 20 s for {what} ({expression}); errors: {:?}",
            self.errors
        );
    }

    /// A left click at the middle of the element `selector` selects, as a user's mouse.
    pub fn click(&mut self, selector: &str) {
        let sel = serde_json::to_string(selector).unwrap();
        let at = self.eval(&format!(
            "(() => {{ const e = document.querySelector({sel}); if (!e) return null; \
             e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); \
             return [r.left + r.width / 2, r.top + r.height / 2]; }})()"
        ));
        let (x, y) = match at.as_array() {
            Some(a) => (a[0].as_f64().unwrap(), a[1].as_f64().unwrap()),
            None => panic!("nothing to click at {selector}"),
        };
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            );
        }
    }

    /// Clicks into the field `selector`, selects what it holds and types `text` over it,
    /// then presses Enter.
    pub fn type_in(&mut self, selector: &str, text: &str) {
        self.click(selector);
        let sel = serde_json::to_string(selector).unwrap();
        self.eval(&format!("document.querySelector({sel}).select()"));
        self.call("Input.insertText", json!({ "text": text }));
        for kind in ["keyDown", "keyUp"] {
            self.call(
                "Input.dispatchKeyEvent",
                json!({"type": kind, "key": "Enter", "code": "Enter",
                       "windowsVirtualKeyCode": 13, "text": "\r"}),
            );
        }
    }

    /// A PNG of the page as it shows now.
    pub fn screenshot(&mut self, to: &Path) {
        use base64::Engine;
        let r = self.call("Page.captureScreenshot", json!({"format": "png"}));
        let png = base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().unwrap())
            .unwrap();
        std::fs::write(to, png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
