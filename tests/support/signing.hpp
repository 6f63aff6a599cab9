// OpenPGP keys made by the tests themselves (gpg in a private home directory), and signing with
// them: detached armored signatures (repomd.xml.asc) with gpg, RPM packages with rpmsign.
// The keys are generated once per test process (test_keys()) and shared by every test.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "integration/sync/sync_harness.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::test {

// Debian's rpm points %__gpg at /usr/bin/gpg2, which the gpg package does not ship.
inline constexpr const char* kGpgBinary = "/usr/bin/gpg";

// The signers: "good" and "other" never expire; "expired" was valid from 2020-01-01 to
// 2020-06-01 (made with gpg's faked system time) and signs as if on 2020-03-01, before it
// expired; "revoked" is revoked (its public key file carries the revocation); "lapsed" was valid
// from 2020-01-01 to 2020-06-01 and signs as if on 2021-01-01, after it expired. The last two are
// made in a home of their own, where the revocation or expiry is added after their secret key
// was copied to the signing home (gpg signs with neither a revoked nor an expired key).
enum class Signer { Good, Other, Expired, Revoked, Lapsed };

class TestKeys {
  public:
    TestKeys() {
        std::filesystem::create_directories(home());
        std::filesystem::permissions(home(), std::filesystem::perms::owner_all);
        generate("good", {});
        generate("other", {});
        generate("expired", {"--faked-system-time", "20200101T000000"}, "2020-06-01");
        generate_aside("revoked", {});
        generate_aside("lapsed", {"--faked-system-time", "20200101T000000"});
        // The public keys as published: revoked, and expired before its signatures.
        const std::string revoked_fingerprint = fingerprint_of(home_of("revoked"), "revoked");
        std::string revocation =
            read_file(home_of("revoked") / "openpgp-revocs.d" / (revoked_fingerprint + ".rev"));
        // gpg writes the certificate with a ':' before the armor line, against accidental use.
        for (std::size_t at = revocation.find(":-----"); at != std::string::npos;
             at = revocation.find(":-----", at)) {
            revocation.erase(at, 1);
        }
        const auto revocation_file = TempDir::write_at(dir_ / "revoked.rev", revocation);
        run_checked(gpg_in(home_of("revoked"), {"--import", revocation_file.string()}),
                    dir_ / "logs");
        run_checked(gpg_in(home_of("lapsed"),
                           {"--faked-system-time", "20200102T000000", "--quick-set-expire",
                            fingerprint_of(home_of("lapsed"), "lapsed"), "2020-06-01"}),
                    dir_ / "logs");
        for (const char* name : {"good", "other", "expired", "revoked", "lapsed"}) {
            const CommandResult exported = run_to_end(
                gpg_in(home_of(name), {"--armor", "--export", email(name)}), dir_ / "logs");
            if (exported.exit_code != 0 || exported.out.empty()) {
                throw std::runtime_error("gpg --export failed: " + exported.err);
            }
            TempDir::write_at(key_file_of(name), exported.out);
            const CommandResult listed =
                run_to_end(gpg({"--with-colons", "--list-keys", email(name)}), dir_ / "logs");
            // "pub:<validity>:<length>:<algo>:<key id>:..."
            for (const std::string& line : lines_of(listed.out)) {
                if (line.starts_with("pub:")) {
                    std::size_t field = 0;
                    std::size_t start = 0;
                    for (; field < 4; ++field) {
                        start = line.find(':', start) + 1;
                    }
                    key_ids_.push_back(line.substr(start, 16));
                    break;
                }
            }
        }
        if (key_ids_.size() != 5) {
            throw std::runtime_error("could not read the generated key ids");
        }
    }
    TestKeys(const TestKeys&) = delete;
    TestKeys& operator=(const TestKeys&) = delete;
    ~TestKeys() {
        // Signing started a gpg-agent for the home directory; it must not outlive it.
        for (const char* name : {"good", "revoked", "lapsed"}) {
            (void)run_to_end({"gpgconf", "--homedir", home_of(name).string(), "--kill", "all"},
                             dir_ / "logs");
        }
    }

    // The armored public key file of `signer`.
    std::filesystem::path key_file(Signer signer) const { return key_file_of(name(signer)); }
    // Its 16-digit uppercase key id.
    const std::string& key_id(Signer signer) const {
        return key_ids_[static_cast<std::size_t>(signer)];
    }

    // Writes the armored detached signature of `file` by `signer` to `signature`.
    void sign_detached(Signer signer, const std::filesystem::path& file,
                       const std::filesystem::path& signature) const {
        std::vector<std::string> args = signing_time(signer);
        for (const std::string& arg :
             {std::string("--yes"), std::string("--local-user"), email(name(signer)),
              std::string("--armor"), std::string("--output"), signature.string(),
              std::string("--detach-sign"), file.string()}) {
            args.push_back(arg);
        }
        run_checked(gpg(args), dir_ / "logs");
    }

    // Signs the RPM package `rpm` in place with `signer` (rpmsign --addsign).
    void sign_rpm(Signer signer, const std::filesystem::path& rpm) const {
        std::vector<std::string> argv{"rpmsign",  "--addsign",
                                      "--define", std::string("__gpg ") + kGpgBinary,
                                      "--define", "_gpg_path " + home().string(),
                                      "--define", "_gpg_name " + email(name(signer))};
        if (signer == Signer::Expired || signer == Signer::Lapsed) {
            argv.push_back("--define");
            argv.push_back("_gpg_sign_cmd_extra_args --faked-system-time " +
                           signing_time(signer)[1]);
        }
        argv.push_back(rpm.string());
        run_checked(argv, dir_ / "logs");
    }

    std::filesystem::path home() const { return dir_ / "gnupg"; }

  private:
    static std::string name(Signer signer) {
        switch (signer) {
            case Signer::Good:
                return "good";
            case Signer::Other:
                return "other";
            case Signer::Expired:
                return "expired";
            case Signer::Revoked:
                return "revoked";
            case Signer::Lapsed:
                return "lapsed";
        }
        return "";
    }
    static std::string email(const std::string& name) { return name + "@rpmirror.invalid"; }
    std::filesystem::path key_file_of(const std::string& name) const {
        return dir_ / ("RPM-GPG-KEY-" + name);
    }
    static std::vector<std::string> signing_time(Signer signer) {
        if (signer == Signer::Expired) {
            return {"--faked-system-time", "20200301T000000"};
        }
        if (signer == Signer::Lapsed) {
            return {"--faked-system-time", "20210101T000000"};
        }
        return {};
    }

    // The gpg home holding the published form of `name`'s public key.
    std::filesystem::path home_of(const std::string& name) const {
        return name == "revoked" || name == "lapsed" ? dir_ / ("gnupg-" + name) : home();
    }

    std::string fingerprint_of(const std::filesystem::path& gpg_home, const std::string& name) {
        const CommandResult listed = run_to_end(
            gpg_in(gpg_home, {"--with-colons", "--list-keys", email(name)}), dir_ / "logs");
        for (const std::string& line : lines_of(listed.out)) {
            if (line.starts_with("fpr:")) {
                return line.substr(12, 40);  // "fpr:::::::::<fingerprint>:"
            }
        }
        throw std::runtime_error("no fingerprint for " + name + ": " + listed.err);
    }

    // Generates `name`'s key in a home of its own and copies its secret key to the signing home.
    void generate_aside(const std::string& name, const std::vector<std::string>& options) {
        const std::filesystem::path aside = home_of(name);
        std::filesystem::create_directories(aside);
        std::filesystem::permissions(aside, std::filesystem::perms::owner_all);
        std::vector<std::string> args = options;
        for (const std::string& arg :
             {std::string("--passphrase"), std::string(""), std::string("--quick-gen-key"),
              "Test " + name + " <" + email(name) + ">", std::string("rsa2048"),
              std::string("sign"), std::string("never")}) {
            args.push_back(arg);
        }
        run_checked(gpg_in(aside, args), dir_ / "logs");
        const CommandResult secret =
            run_to_end(gpg_in(aside, {"--pinentry-mode", "loopback", "--passphrase", "", "--armor",
                                      "--export-secret-keys", email(name)}),
                       dir_ / "logs");
        if (secret.exit_code != 0 || secret.out.empty()) {
            throw std::runtime_error("gpg --export-secret-keys failed: " + secret.err);
        }
        const auto secret_file = TempDir::write_at(dir_ / (name + ".secret"), secret.out);
        run_checked(gpg({"--pinentry-mode", "loopback", "--passphrase", "", "--import",
                         secret_file.string()}),
                    dir_ / "logs");
    }

    std::vector<std::string> gpg(const std::vector<std::string>& args) const {
        return gpg_in(home(), args);
    }
    static std::vector<std::string> gpg_in(const std::filesystem::path& gpg_home,
                                           const std::vector<std::string>& args) {
        std::vector<std::string> argv{kGpgBinary, "--batch", "--quiet", "--homedir",
                                      gpg_home.string()};
        argv.insert(argv.end(), args.begin(), args.end());
        return argv;
    }

    void generate(const std::string& name, const std::vector<std::string>& options,
                  const std::string& expiry = "never") {
        std::vector<std::string> args = options;
        for (const std::string& arg :
             {std::string("--passphrase"), std::string(""), std::string("--quick-gen-key"),
              "Test " + name + " <" + email(name) + ">", std::string("rsa2048"),
              std::string("sign"), expiry}) {
            args.push_back(arg);
        }
        run_checked(gpg(args), dir_ / "logs");
    }

    TempDir dir_;
    std::vector<std::string> key_ids_;  // in Signer order
};

// The keys of this test process, generated on first use.
inline const TestKeys& test_keys() {
    static const TestKeys keys;
    return keys;
}

// Returns true iff the tools the signature tests need are installed.
inline bool signing_tools_available() {
    return std::filesystem::exists(kGpgBinary) && std::filesystem::exists("/usr/bin/rpmsign");
}

}  // namespace rpmirror::test
