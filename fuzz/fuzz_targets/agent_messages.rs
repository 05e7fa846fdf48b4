//! The agent channel's frames: the input decoded as an agent's message (the server reads these
//! from the network) and as a server's (the agent does). Nothing panics; a hello is checked and
//! its binds parsed; what decodes encodes and decodes back to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tunnel_core::Validate;
use tunnel_core::agent_protocol::{AgentMessage, ServerMessage};

fuzz_target!(|data: &[u8]| {
    if let Ok(message) = serde_json::from_slice::<AgentMessage>(data) {
        if let AgentMessage::Hello(hello) = &message {
            let _ = hello.field_errors();
            let _ = hello.parsed_binds();
        }
        let again: AgentMessage =
            serde_json::from_slice(&serde_json::to_vec(&message).unwrap()).unwrap();
        assert_eq!(again, message);
    }
    if let Ok(message) = serde_json::from_slice::<ServerMessage>(data) {
        let again: ServerMessage =
            serde_json::from_slice(&serde_json::to_vec(&message).unwrap()).unwrap();
        assert_eq!(again, message);
    }
});
