//! AF_PACKET backend (written next).
