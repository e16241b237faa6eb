//! Which stamps a tester's trials take: the source asked for (`tester.timestamps`) against
//! what its ports can give and what this build reads.

use super::error::{EngineError, Res};
use xlat_io::Stamping;
use xlat_trial::StampSource;

/// The sources this build reads, best first.
const BUILT: [StampSource; 2] = [StampSource::Kernel, StampSource::User];

/// Can a port that stamps as `st` says stamp with `source`?
fn can(source: StampSource, st: &Stamping) -> bool {
    match source {
        StampSource::Kernel => st.kernel,
        StampSource::Hardware => st.hardware,
        StampSource::User => true,
    }
}

/// Can every port of `ports` stamp with `source`?
fn all_can(source: StampSource, ports: &[(&'static str, String, Stamping); 2]) -> bool {
    ports.iter().all(|(_, _, st)| can(source, st))
}

/// The sources this build reads that every port of `ports` can give, best first.
pub(super) fn available(ports: &[(&'static str, String, Stamping); 2]) -> Vec<StampSource> {
    BUILT.into_iter().filter(|s| all_can(*s, ports)).collect()
}

/// The source for `want` (`None`: the best built one both ports can) on ports `ports` (side,
/// port name, what it can stamp); an error that names the port and what it supports when a
/// port cannot stamp so, or that says the source is not built yet.
pub(super) fn resolve(want: Option<StampSource>, ports: [(&'static str, String, Stamping); 2]) -> Res<StampSource> {
    let Some(want) = want else {
        return Ok(available(&ports).first().copied().unwrap_or(StampSource::User));
    };
    if BUILT.contains(&want) && all_can(want, &ports) {
        return Ok(want);
    }
    for (side, name, st) in &ports {
        if !can(want, st) {
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
             (only kernel and user); use tester.timestamps = auto, kernel or user",
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

    fn plain(name: &str) -> (&'static str, String, Stamping) {
        ("right", name.to_string(), Stamping::default())
    }

    #[test]
    fn auto_is_the_best_both_ports_can_and_the_rest_is_refused_by_name() {
        assert_eq!(resolve(None, [veth("a"), veth("b")]).unwrap(), StampSource::Kernel);
        assert_eq!(resolve(None, [veth("a"), plain("m")]).unwrap(), StampSource::User);
        assert_eq!(available(&[veth("a"), veth("b")]), [StampSource::Kernel, StampSource::User]);
        assert_eq!(available(&[veth("a"), plain("m")]), [StampSource::User]);
        assert_eq!(resolve(Some(StampSource::User), [veth("a"), veth("b")]).unwrap(), StampSource::User);
        assert_eq!(
            resolve(Some(StampSource::Kernel), [veth("a"), veth("b")]).unwrap(),
            StampSource::Kernel
        );
        let e = resolve(Some(StampSource::Kernel), [veth("a"), plain("mem1")])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("right port: tester.timestamps = kernel: port mem1 has no kernel stamps"),
            "{e}"
        );
        let e = resolve(Some(StampSource::Hardware), [veth("xlat-tl0"), veth("b")])
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "left port: tester.timestamps = hardware: port xlat-tl0 has no hardware stamps on transmit and receive; it has: \
             software transmit, software receive; no hardware clock (ethtool -T xlat-tl0)"
        );
        let mut nic = veth("a");
        nic.2.hardware = true;
        let mut nic2 = nic.clone();
        nic2.1 = "b".into();
        let e = resolve(Some(StampSource::Hardware), [nic, nic2]).unwrap_err().to_string();
        assert!(
            e.contains("ports a and b can stamp so, but this build of xlatperf does not read hardware stamps yet"),
            "{e}"
        );
    }
}
