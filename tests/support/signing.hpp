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
// 2020-06-01 (made with gpg's faked system time) and signs as if on 2020-03-01.
enum class Signer { Good, Other, Expired };

class TestKeys {
  public:
    TestKeys() {
        std::filesystem::create_directories(home());
        std::filesystem::permissions(home(), std::filesystem::perms::owner_all);
        generate("good", {});
        generate("other", {});
        generate("expired", {"--faked-system-time", "20200101T000000"}, "2020-06-01");
        for (const char* name : {"good", "other", "expired"}) {
            const CommandResult exported =
                run_to_end(gpg({"--armor", "--export", email(name)}), dir_ / "logs");
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
        if (key_ids_.size() != 3) {
            throw std::runtime_error("could not read the generated key ids");
        }
    }
    TestKeys(const TestKeys&) = delete;
    TestKeys& operator=(const TestKeys&) = delete;
    ~TestKeys() {
        // Signing started a gpg-agent for the home directory; it must not outlive it.
        (void)run_to_end({"gpgconf", "--homedir", home().string(), "--kill", "all"}, dir_ / "logs");
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
        if (signer == Signer::Expired) {
            argv.push_back("--define");
            argv.push_back("_gpg_sign_cmd_extra_args --faked-system-time 20200301T000000");
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
        return {};
    }

    std::vector<std::string> gpg(const std::vector<std::string>& args) const {
        std::vector<std::string> argv{kGpgBinary, "--batch", "--quiet", "--homedir",
                                      home().string()};
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
