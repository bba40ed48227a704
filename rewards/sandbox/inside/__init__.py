"""Code that runs inside the sandbox (stdlib only), loaded there from source by isolation.bootstrap.

MODULES is the one list of what the sandbox receives, in dependency order.
"""

MODULES = ("framing", "wire", "protocol", "channel", "landlock", "seccomp", "jobns", "containment", "mirrors", "ops", "candidate", "zygote", "proxy", "guards", "stdlib_patches", "session", "judge", "hygiene", "processes", "worker")
