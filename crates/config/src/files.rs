//! Writing the user's files: every file xlatperf writes (results, plots, configurations, the
//! lab's state) goes through [`write_atomic`], so that a reader sees the old file or the new
//! one, never a part, and two writers (two files of one command, two processes) never share a
//! temporary file.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// How every temporary file's name ends.
const TEMP_SUFFIX: &str = ".tmp-xlatperf";

/// A temporary name beside `path`, unique to this process and call:
/// `DIR/.NAME.<pid>-<n>.tmp-xlatperf` (hidden, and named after the file it becomes).
pub fn temp_path(path: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = format!(".{name}.{}-{n}{TEMP_SUFFIX}", std::process::id());
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.join(tmp),
        _ => PathBuf::from(tmp),
    }
}

/// Whether `name` is a file name [`temp_path`] makes: an atomic write in progress, or one a
/// killed process left behind.
pub fn is_temporary(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(TEMP_SUFFIX)
}

/// Write `contents` to `path` through a temporary file beside it ([`temp_path`]), flushed to
/// the disk and renamed over it; on failure the temporary file is removed and `path` is as it
/// was. After a crash or a power cut the file is the old one or the new one (the rename is
/// flushed too), which is what lets a campaign resume after a reboot.
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let tmp = temp_path(path);
    let r = std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(contents).and_then(|_| f.sync_all()))
        .and_then(|_| std::fs::rename(&tmp, path));
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
        return r;
    }
    // The directory entry: best effort (some file systems cannot open a directory for sync).
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_differ_and_nothing_is_left_behind() {
        let dir = std::env::temp_dir().join(format!("xlat-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a.json"), dir.join("a.csv"));
        assert_ne!(temp_path(&a), temp_path(&a), "two writes of one file");
        let t = temp_path(&b);
        assert_eq!(t.parent(), Some(dir.as_path()));
        assert!(t.file_name().unwrap().to_string_lossy().starts_with(".a.csv."), "{t:?}");
        assert!(is_temporary(&t.file_name().unwrap().to_string_lossy()));
        assert!(!is_temporary("a.csv") && !is_temporary(".a.csv"));
        write_atomic(&a, b"{}").unwrap();
        write_atomic(&b, b"x,y\n").unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"{}");
        let names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        // A directory that does not exist: an error, no file.
        assert!(write_atomic(&dir.join("no/such/x"), b"").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(temp_path(Path::new("x")).parent(), Some(Path::new("")));
    }
}
