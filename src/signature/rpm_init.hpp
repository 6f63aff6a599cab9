// librpm's one-time set-up, for every user of librpm in rpmirror (keys, rpm databases).
#pragma once

namespace rpmirror {

// Reads librpm's configuration (macros such as %_dbpath) and sets up its crypto backend, once per
// process; silences librpm's own messages (every outcome reaches the user through an Error).
// Thread-safe.
void initialise_rpm();

}  // namespace rpmirror
