//! Which stamps a tester's trials take: the source asked for (`tester.timestamps`) against
//! what its ports can give and what this build reads.

use super::error::{EngineError, Res};
use xlat_io::Stamping;
use xlat_trial::StampSource;

/// The sources this build reads, best first.
const BUILT: [StampSource; 1] = [StampSource::User];

/// The source for `want` (`None`: the best built one) on ports `ports` (side, port name, what
/// it can stamp); an error that names the port and what it supports when a port cannot stamp
/// so, or that says the source is not built yet.
pub(super) fn resolve(want: Option<StampSource>, ports: [(&'static str, String, Stamping); 2]) -> Res<StampSource> {
    let Some(want) = want else { return Ok(BUILT[0]) };
    if BUILT.contains(&want) {
        return Ok(want);
    }
    for (side, name, st) in &ports {
        let can = match want {
            StampSource::Kernel => st.kernel,
            StampSource::Hardware => st.hardware,
            StampSource::User => true,
        };
        if !can {
            return Err(EngineError::Port {
                side,
                msg: format!(
                    "tester.timestamps = {}: port {name} has no {} stamps on transmit and receive; it has: {}",
                    want.name(),
                    want.name(),
                    st.detail
                ),
            });
        }
    }
    Err(EngineError::Port {
        side: ports[0].0,
        msg: format!(
            "tester.timestamps = {}: ports {} and {} can stamp so, but this build of xlatperf does not read {} stamps yet \
             (only user); use tester.timestamps = auto or user",
            want.name(),
            ports[0].1,
            ports[1].1,
            want.name()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn veth(name: &str) -> (&'static str, String, Stamping) {
        let st = Stamping {
            kernel: true,
            hardware: false,
            detail: format!("software transmit, software receive; no hardware clock (ethtool -T {name})"),
        };
        ("left", name.to_string(), st)
    }

    #[test]
    fn auto_and_user_are_user_and_the_rest_is_refused_by_name() {
        assert_eq!(resolve(None, [veth("a"), veth("b")]).unwrap(), StampSource::User);
        assert_eq!(resolve(Some(StampSource::User), [veth("a"), veth("b")]).unwrap(), StampSource::User);
        let e = resolve(Some(StampSource::Hardware), [veth("xlat-tl0"), veth("b")])
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "left port: tester.timestamps = hardware: port xlat-tl0 has no hardware stamps on transmit and receive; it has: \
             software transmit, software receive; no hardware clock (ethtool -T xlat-tl0)"
        );
        let e = resolve(Some(StampSource::Kernel), [veth("a"), veth("b")]).unwrap_err().to_string();
        assert!(
            e.contains("ports a and b can stamp so, but this build of xlatperf does not read kernel stamps yet"),
            "{e}"
        );
    }
}
