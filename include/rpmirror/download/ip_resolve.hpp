// Which IP versions name resolution may return (dnf's `ip_resolve`). Shared by the repository
// configuration and the download engine.
#pragma once

namespace rpmirror {

enum class IpResolve {
    Any,  // whatever the resolver returns (dnf: `whatever`)
    V4,   // IPv4 only (`4`, `ipv4`)
    V6,   // IPv6 only (`6`, `ipv6`)
};

}  // namespace rpmirror
