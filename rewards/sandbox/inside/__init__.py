"""Code that runs inside the sandbox (stdlib only), loaded there from source by isolation.bootstrap.

MODULES is the one list of what the sandbox receives, in dependency order.
"""

MODULES = ("framing", "codec", "setorder", "codecs_builtin", "codecs_std", "codecs_class", "wire", "protocol",
           "channel", "landlock", "seccomp", "jobns", "containment", "mirrors", "candidate", "zygote", "proxy",
           "stdlib_patches", "session", "judge", "worker")
