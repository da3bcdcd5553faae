//! Mounting a site over sshfs in the tests.

use std::process::Command;
use std::time::Duration;

/// The mount options a site needs: no caching of names or attributes, so that another
/// machine's rename is seen at once (how operators should mount a site; see docs/OPERATING.md).
pub fn mount_options(identity_dir: &std::path::Path) -> String {
    format!(
        "IdentityFile={}/userkey,StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null,\
         dir_cache=no,attr_timeout=0,entry_timeout=0,negative_timeout=0,direct_io",
        identity_dir.display()
    )
}

/// Runs the sshfs command `make` builds until it mounts (the sshd may still be starting),
/// at most 50 times, 100 ms apart.
pub fn mount(mut make: impl FnMut() -> Command) {
    let mut tries = 0;
    loop {
        let out = make()
            .output()
            .expect("sshfs (install sshfs; .ci/run does)");
        if out.status.success() {
            return;
        }
        tries += 1;
        assert!(
            tries < 50,
            "sshfs: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
