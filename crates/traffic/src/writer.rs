//! The sender's side of a burst's frame writes: [`FrameWriter`] (what writes frame `i` into a
//! backend buffer) and [`WithWriter`] (a sender's frame loop, generic over the writer), so that
//! the choice of writer is made once per burst ([`Burst::with_writer`](crate::Burst::with_writer))
//! and each kind of burst gets a frame loop compiled for it.

/// Writes a burst's frames (see [`Burst::with_writer`](crate::Burst::with_writer)): the
/// contract of [`Burst::write`](crate::Burst::write).
pub trait FrameWriter: Copy {
    /// Write frame `i` with `field` in its payload field into `buf`, whose `cookie` says what
    /// it holds; returns its length (0 when `i` is outside the burst or `buf` is too short).
    fn write(&self, i: usize, field: u64, buf: &mut [u8], cookie: &mut u64) -> usize;
}

/// What a sender does with a burst's writer: a closure generic over the writer's type, whose
/// frame loop is then compiled once per kind of burst (see [`Burst::with_writer`](crate::Burst::with_writer)).
pub trait WithWriter {
    type Out;
    fn with<W: FrameWriter>(self, w: W) -> Self::Out;
}
