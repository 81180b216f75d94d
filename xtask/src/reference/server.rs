//! The local HTTP server that gives Chromium the harness page, the
//! viewer's files and the model, and takes the rendered pixels back.

use super::*;

/// What the local server serves.
pub(super) struct Site {
    /// The viewer's `dist/` (`/viewer/...`).
    pub(super) viewer: PathBuf,
    /// The model's folder (`/model/...`: its buffers and images).
    pub(super) model_dir: PathBuf,
    /// The model's file name, served as `model_bytes` instead of the file.
    pub(super) model_name: String,
    pub(super) model_bytes: Vec<u8>,
    /// `/config.json`.
    pub(super) config: Vec<u8>,
}

/// What the page posts back.
enum Message {
    Log(String),
    Result(Vec<u8>),
    Fail(String),
}

/// Serves `site`, opens the page in Chromium and waits for its pixels.
pub(super) fn render_in_chromium(chromium: &Path, site: Site, width: u32, height: u32, log_path: &Path) -> Result<Vec<u8>> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("starting the local server: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let (tx, rx) = mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let site = Arc::new(site);
    let server = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let (site, tx) = (site.clone(), tx.clone());
                std::thread::spawn(move || {
                    let _ = serve(stream, &site, &tx);
                });
            }
        })
    };
    let profile = target_dir().join("reference-tools").join(format!("chromium-profile-{}", std::process::id()));
    let log = std::fs::File::create(log_path).map_err(|e| format!("creating {}: {e}", log_path.display()))?;
    let mut child = Command::new(chromium)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--use-angle=swiftshader",
            "--enable-unsafe-swiftshader",
            "--ignore-gpu-blocklist",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--mute-audio",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--window-size={width},{height}"))
        .arg(format!("http://127.0.0.1:{port}/harness.html"))
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log)
        .spawn()
        .map_err(|e| format!("starting {}: {e}", chromium.display()))?;
    let started = Instant::now();
    let result = loop {
        let left = RENDER_TIMEOUT.saturating_sub(started.elapsed());
        match rx.recv_timeout(left.min(Duration::from_secs(1))) {
            Ok(Message::Log(line)) => eprintln!("xtask: reference page: {line}"),
            Ok(Message::Result(rgba)) => break Ok(rgba),
            Ok(Message::Fail(e)) => break Err(format!("the reference page failed: {e}")),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Ok(Some(status)) = child.try_wait() {
                    break Err(format!("Chromium exited ({status}) before the page sent its image; see {}", log_path.display()));
                }
                if started.elapsed() >= RENDER_TIMEOUT {
                    break Err(format!("no image from Chromium in {} s; see {}", RENDER_TIMEOUT.as_secs(), log_path.display()));
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break Err("the local server stopped".into()),
        }
    };
    // Our Chromium only: TERM, a moment to close, then KILL.
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline && matches!(child.try_wait(), Ok(None)) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    stop.store(true, Ordering::SeqCst);
    let _ = TcpStream::connect(("127.0.0.1", port));
    let _ = server.join();
    let _ = std::fs::remove_dir_all(&profile);
    let rgba = result?;
    let expected = width as usize * height as usize * 4;
    if rgba.len() != expected {
        return Err(format!("the page sent {} bytes for a {width}x{height} image ({expected} expected)", rgba.len()));
    }
    Ok(rgba)
}

/// Answers one HTTP request (one per connection).
fn serve(stream: TcpStream, site: &Site, tx: &mpsc::Sender<Message>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut parts = request_line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
    let mut content_length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.trim().eq_ignore_ascii_case("content-length") {
                content_length = v.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; content_length];
    reader.read_exact(&mut body)?;
    let path = percent_decode(target.split(['?', '#']).next().unwrap_or("/"));
    let mut stream = stream;
    if method == "POST" {
        let text = || String::from_utf8_lossy(&body).into_owned();
        let message = match path.as_str() {
            "/log" => Some(Message::Log(text())),
            "/fail" => Some(Message::Fail(text())),
            "/result" => Some(Message::Result(body.clone())),
            _ => None,
        };
        return match message {
            Some(m) => {
                let _ = tx.send(m);
                respond(&mut stream, 200, "text/plain", b"ok")
            }
            None => respond(&mut stream, 404, "text/plain", b"not found"),
        };
    }
    let (status, kind, data): (u16, &str, Vec<u8>) = match path.as_str() {
        "/" | "/harness.html" => (200, "text/html; charset=utf-8", HARNESS_HTML.as_bytes().to_vec()),
        "/harness.js" => (200, "text/javascript; charset=utf-8", HARNESS_JS.as_bytes().to_vec()),
        "/config.json" => (200, "application/json", site.config.clone()),
        "/favicon.ico" => (404, "text/plain", b"none".to_vec()),
        p => {
            let file = if let Some(rel) = p.strip_prefix("/viewer/") {
                safe_join(&site.viewer, rel)
            } else if let Some(rel) = p.strip_prefix("/model/") {
                if rel == site.model_name {
                    return respond(&mut stream, 200, content_type(rel), &site.model_bytes);
                }
                safe_join(&site.model_dir, rel)
            } else {
                None
            };
            match file.and_then(|f| std::fs::read(&f).ok().map(|d| (f, d))) {
                Some((f, d)) => (200, content_type(&f.to_string_lossy()), d),
                None => {
                    let _ = tx.send(Message::Log(format!("404 for {p}")));
                    (404, "text/plain", b"not found".to_vec())
                }
            }
        }
    };
    respond(&mut stream, status, kind, &data)
}

fn respond(stream: &mut TcpStream, status: u16, kind: &str, body: &[u8]) -> std::io::Result<()> {
    let reason = if status == 200 { "OK" } else { "Not Found" };
    write!(
        stream,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(body)?;
    stream.flush()
}

/// `base/rel` when `rel` has no `..`, root or empty parts.
fn safe_join(base: &Path, rel: &str) -> Option<PathBuf> {
    let ok = !rel.is_empty() && rel.split('/').all(|part| !part.is_empty() && part != "." && part != ".." && !part.contains('\\'));
    ok.then(|| base.join(rel))
}

fn content_type(name: &str) -> &'static str {
    let ext = name.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    match ext.as_str() {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "json" => "application/json",
        "wasm" => "application/wasm",
        "gltf" => "model/gltf+json",
        "glb" => "model/gltf-binary",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "webp" => "image/webp",
        "ktx2" => "image/ktx2",
        _ => "application/octet-stream",
    }
}

/// `%XX` escapes decoded (bytes that do not form UTF-8 are replaced).
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Escapes what a URL path segment cannot hold as is.
pub fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| if b.is_ascii_alphanumeric() || b"-._~".contains(&b) { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn paths_are_decoded_and_kept_inside() {
        assert_eq!(percent_decode("/model/a%20b.png"), "/model/a b.png");
        assert_eq!(percent_decode("/x%2"), "/x%2");
        assert_eq!(percent_encode("Flight Helmet.gltf"), "Flight%20Helmet.gltf");
        assert!(safe_join(Path::new("/a"), "../etc/passwd").is_none());
        assert!(safe_join(Path::new("/a"), "b//c").is_none());
        assert_eq!(safe_join(Path::new("/a"), "libs/x.wasm"), Some(PathBuf::from("/a/libs/x.wasm")));
    }
}
