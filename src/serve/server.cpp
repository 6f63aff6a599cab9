// `rpmirror serve` over libmicrohttpd (see rpmirror/serve/serve.hpp; why this library:
// doc/design.md). One daemon per listen address (or socket systemd passed), a thread per
// connection; every request is answered from a job's JobCatalogue (catalogue.hpp) with the rules of
// http.hpp.
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "jobs/jobs_config.hpp"
#include "rpmirror/serve/serve.hpp"
#include "serve/catalogue.hpp"
#include "serve/counters.hpp"
#include "serve/eviction.hpp"
#include "serve/http.hpp"
#include "serve/listen_sockets.hpp"
#include "serve/on_demand.hpp"
#include "store/object_store.hpp"

namespace rpmirror {

namespace {

using serve::JobCatalogue;

struct DaemonStopper {
    void operator()(MHD_Daemon* daemon) const { MHD_stop_daemon(daemon); }
};
using Daemon = std::unique_ptr<MHD_Daemon, DaemonStopper>;

struct ResponseDestroyer {
    void operator()(MHD_Response* response) const { MHD_destroy_response(response); }
};
using Response = std::unique_ptr<MHD_Response, ResponseDestroyer>;

struct AddrinfoFreer {
    void operator()(addrinfo* info) const { ::freeaddrinfo(info); }
};

// The bytes of a held file from `offset` on, for MHD_create_response_from_callback.
struct BytesReader {
    std::shared_ptr<const serve::HeldFile> file;
    std::uint64_t offset = 0;
};

ssize_t read_bytes(void* cls, std::uint64_t position, char* buffer, std::size_t max) {
    const auto* reader = static_cast<const BytesReader*>(cls);
    const std::string& bytes = reader->file->bytes;
    const std::uint64_t from = reader->offset + position;
    if (from >= bytes.size()) {
        return MHD_CONTENT_READER_END_OF_STREAM;
    }
    const std::size_t count = std::min<std::uint64_t>(max, bytes.size() - from);
    std::memcpy(buffer, bytes.data() + from, count);
    return static_cast<ssize_t>(count);
}

void free_reader(void* cls) {
    std::unique_ptr<BytesReader>(static_cast<BytesReader*>(cls));
}

// A package passed on as its fetch from upstream delivers it (serve/on_demand.hpp).
struct StreamReader {
    std::shared_ptr<serve::Fetch> fetch;  // null for HEAD (never read)
    unsigned attempt = 0;
};

ssize_t read_stream(void* cls, std::uint64_t position, char* buffer, std::size_t max) {
    auto* reader = static_cast<StreamReader*>(cls);
    if (!reader->fetch) {
        return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    auto got = reader->fetch->read(position, buffer, max, reader->attempt);
    if (!got) {
        return MHD_CONTENT_READER_END_WITH_ERROR;  // the client sees a short body
    }
    return *got == 0 ? MHD_CONTENT_READER_END_OF_STREAM : static_cast<ssize_t>(*got);
}

void free_stream(void* cls) {
    std::unique_ptr<StreamReader>(static_cast<StreamReader*>(cls));
}

// Keeps the raw path: parse_request_path decodes it (and refuses what MHD would let through).
std::size_t keep_raw(void* /*cls*/, MHD_Connection* /*connection*/, char* uri) {
    return std::strlen(uri);
}

std::optional<std::string_view> header(MHD_Connection* connection, const char* name) {
    const char* value = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, name);
    return value == nullptr ? std::nullopt : std::optional<std::string_view>(value);
}

std::string numeric_address(const sockaddr* address, socklen_t length) {
    char host[NI_MAXHOST] = "?";
    char port[NI_MAXSERV] = "?";
    ::getnameinfo(address, length, host, sizeof host, port, sizeof port,
                  NI_NUMERICHOST | NI_NUMERICSERV);
    const bool v6 = address->sa_family == AF_INET6;
    return fmt::format("{}{}{}:{}", v6 ? "[" : "", host, v6 ? "]" : "", port);
}

std::string client_of(MHD_Connection* connection) {
    const MHD_ConnectionInfo* info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == nullptr || info->client_addr == nullptr) {
        return "-";
    }
    const sockaddr* address = info->client_addr;
    std::string text = numeric_address(
        address, address->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in));
    return text.substr(0, text.rfind(':'));
}

std::string_view content_type(std::string_view key) {
    if (key.ends_with(".rpm")) {
        return "application/x-rpm";
    }
    if (key.ends_with(".xml")) {
        return "text/xml";
    }
    return "application/octet-stream";
}

// What a request is answered with, before it becomes an MHD_Response.
struct Answer {
    unsigned status = MHD_HTTP_NOT_FOUND;
    std::shared_ptr<const serve::HeldFile> body;  // null: no body
    // Set with `length` (the listed size) and no body: passed on from upstream as it arrives.
    bool streamed = false;
    std::shared_ptr<serve::Fetch> fetch;  // what a streamed GET reads; null for HEAD
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string reason;  // for the access log
    std::string job;     // whose counters count it ("" = none)
    bool refused = false;
};

// The cache-max-size of one on-demand job, and what its kept snapshots hold.
struct CacheBound {
    std::uint64_t bytes = 0;
    serve::HeldPackages::SnapshotKeys snapshot_keys;
};

class Server {
  public:
    Server(std::map<std::string, std::unique_ptr<JobCatalogue>> jobs,
           std::map<std::string, std::unique_ptr<serve::OnDemand>> on_demand,
           std::map<std::string, CacheBound> bounds, ServeEvents& events)
        : jobs_(std::move(jobs)),
          on_demand_(std::move(on_demand)),
          events_(events),
          counters_(job_names(jobs_)) {
        for (auto& [name, fetches] : on_demand_) {
            fetches->set_warn([this](const std::string& message) { warn(message); });
            fetches->set_counters(&counters_.job(name));
        }
        bound_jobs(std::move(bounds));
    }

    MHD_Result handle(MHD_Connection* connection, const char* url, const char* method) {
        Answer answer = std::string_view(url) == "/metrics" ? metrics(method)
                                                            : answer_for(connection, url, method);
        Response response = make_response(answer);
        if (!response) {
            return MHD_NO;
        }
        for (const auto& [name, value] : answer.headers) {
            MHD_add_response_header(response.get(), name.c_str(), value.c_str());
        }
        const bool head = std::string_view(method) == MHD_HTTP_METHOD_HEAD;
        std::string line = fmt::format("{} \"{} {}\" {} {}", client_of(connection), method, url,
                                       answer.status, head ? 0 : answer.length);
        if (!answer.reason.empty()) {
            line += " " + answer.reason;
        }
        log_access(line);
        count(answer, head);
        return MHD_queue_response(connection, answer.status, response.get());
    }

    // The fetches first: their threads use the counters and the events.
    ~Server() { on_demand_.clear(); }
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    void warn(const std::string& message) {
        std::lock_guard lock(events_mutex_);
        events_.warning(message);
    }

  private:
    // cache-max-size: each bounded job's held packages, told what is kept (by its fetches) and
    // what is served (note_served).
    void bound_jobs(std::map<std::string, CacheBound> bounds) {
        for (auto& [name, bound] : bounds) {
            const auto fetches = on_demand_.find(name);
            if (fetches == on_demand_.end()) {
                continue;
            }
            auto held = std::make_unique<serve::HeldPackages>(
                *jobs_.at(name), bound.bytes, std::move(bound.snapshot_keys), &counters_.job(name));
            held->set_warn([this](const std::string& message) { warn(message); });
            fetches->second->set_on_kept(
                [packages = held.get()](const std::string& key, std::uint64_t size) {
                    packages->kept(key, size);
                });
            held_.emplace(name, std::move(held));
        }
    }

    // A package of `job` was answered from the store: the most recently served of a bounded job.
    void note_served(const std::string& job, const std::string& key) {
        if (const auto held = held_.find(job); held != held_.end()) {
            held->second->served(key);
        }
    }

    static std::vector<std::string> job_names(
        const std::map<std::string, std::unique_ptr<JobCatalogue>>& jobs) {
        std::vector<std::string> names;
        for (const auto& entry : jobs) {
            names.push_back(entry.first);
        }
        return names;
    }

    void count(const Answer& answer, bool head) {
        serve::JobCounters& counters = counters_.job(answer.job);
        counters.requests.fetch_add(1, std::memory_order_relaxed);
        if (answer.status >= 500) {
            counters.errors.fetch_add(1, std::memory_order_relaxed);
        } else if (answer.status == MHD_HTTP_NOT_FOUND) {
            counters.misses.fetch_add(1, std::memory_order_relaxed);
            if (answer.refused) {
                counters.refused.fetch_add(1, std::memory_order_relaxed);
            }
        } else if (answer.status != MHD_HTTP_METHOD_NOT_ALLOWED) {
            counters.hits.fetch_add(1, std::memory_order_relaxed);
        }
        if (!head) {
            counters.bytes.fetch_add(answer.length, std::memory_order_relaxed);
        }
    }

    // /metrics: the counters in the Prometheus text format.
    Answer metrics(std::string_view method) {
        Answer answer;
        if (method != MHD_HTTP_METHOD_GET && method != MHD_HTTP_METHOD_HEAD) {
            answer.status = MHD_HTTP_METHOD_NOT_ALLOWED;
            answer.headers.emplace_back(MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
            return answer;
        }
        auto body = std::make_shared<serve::HeldFile>();
        body->bytes = counters_.text();
        body->size = body->bytes.size();
        answer.status = MHD_HTTP_OK;
        answer.length = body->size;
        answer.body = std::move(body);
        answer.headers.emplace_back(MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; version=0.0.4");
        return answer;
    }

    void log_access(const std::string& line) {
        std::lock_guard lock(events_mutex_);
        events_.access(line);
    }

    Answer answer_for(MHD_Connection* connection, std::string_view url, std::string_view method) {
        Answer answer;
        if (method != MHD_HTTP_METHOD_GET && method != MHD_HTTP_METHOD_HEAD) {
            answer.status = MHD_HTTP_METHOD_NOT_ALLOWED;
            answer.headers.emplace_back(MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
            return answer;
        }
        auto target = serve::parse_request_path(url);
        if (!target) {
            answer.reason = "(refused: " + target.error().message + ")";
            answer.refused = true;
            return answer;
        }
        const auto job = jobs_.find(target->job);
        if (job == jobs_.end()) {
            return answer;
        }
        answer.job = job->first;
        if (target->key.empty()) {
            return answer;
        }
        JobCatalogue& catalogue = *job->second;
        if (auto refreshed = catalogue.refresh(target->key == "repodata/repomd.xml");
            !refreshed && refreshed.error().code != ErrorCode::NotFound) {
            warn(fmt::format("{}: cannot reload the published metadata: {}", catalogue.name(),
                             refreshed.error().to_string()));
        }
        auto found = catalogue.find(target->key);
        if (!found) {
            return answer;
        }
        std::shared_ptr<const serve::HeldFile> body = found->file.held;
        if (!body) {
            auto opened = catalogue.open(target->key);
            const auto fetches = on_demand_.find(job->first);
            if (!opened && opened.error().code == ErrorCode::NotFound &&
                fetches != on_demand_.end()) {
                auto fetched = fetch_from_upstream(connection, catalogue, *fetches->second, *found,
                                                   target->key, method, answer);
                if (!fetched) {
                    return answer;  // answered: streamed, or an error
                }
                opened = std::move(*fetched);
            }
            if (!opened) {
                const ErrorCode code = opened.error().code;
                if (code == ErrorCode::NotFound) {
                    answer.reason = "(listed, not held)";
                } else if (code == ErrorCode::Unsafe) {  // a symlink, a directory: never followed
                    answer.reason = "(refused: " + opened.error().to_string() + ")";
                    answer.refused = true;
                } else {
                    answer.status = MHD_HTTP_INTERNAL_SERVER_ERROR;
                    warn(fmt::format("{}: {}", catalogue.name(), opened.error().to_string()));
                }
                return answer;
            }
            body = std::make_shared<const serve::HeldFile>(std::move(*opened));
            note_served(job->first, target->key);
        }
        if (!validated(connection, found->file, target->key, answer)) {
            return answer;
        }
        const serve::Validators validators{found->file.etag, found->file.last_modified};
        const std::uint64_t size = body->size;
        serve::RangeAnswer range;
        if (serve::if_range_holds(validators, header(connection, MHD_HTTP_HEADER_IF_RANGE))) {
            range = serve::parse_range(header(connection, MHD_HTTP_HEADER_RANGE), size);
        }
        if (range.kind == serve::RangeKind::Unsatisfiable) {
            answer.status = MHD_HTTP_RANGE_NOT_SATISFIABLE;
            answer.headers.emplace_back(MHD_HTTP_HEADER_CONTENT_RANGE,
                                        fmt::format("bytes */{}", size));
            return answer;
        }
        answer.status = MHD_HTTP_OK;
        answer.length = size;
        if (range.kind == serve::RangeKind::Partial) {
            answer.status = MHD_HTTP_PARTIAL_CONTENT;
            answer.offset = range.range.first;
            answer.length = range.range.length;
            answer.headers.emplace_back(MHD_HTTP_HEADER_CONTENT_RANGE,
                                        fmt::format("bytes {}-{}/{}", answer.offset,
                                                    answer.offset + answer.length - 1, size));
        }
        answer.body = std::move(body);
        return answer;
    }

    // Adds the validators and answers 304 when the client holds the file: returns false iff
    // `answer` is then complete.
    static bool validated(MHD_Connection* connection, const serve::ListedFile& file,
                          const std::string& key, Answer& answer) {
        const serve::Validators validators{file.etag, file.last_modified};
        if (!validators.etag.empty()) {
            answer.headers.emplace_back(MHD_HTTP_HEADER_ETAG, validators.etag);
        }
        if (validators.last_modified > 0) {
            answer.headers.emplace_back(MHD_HTTP_HEADER_LAST_MODIFIED,
                                        serve::http_date(validators.last_modified));
        }
        answer.headers.emplace_back(MHD_HTTP_HEADER_ACCEPT_RANGES, "bytes");
        if (serve::not_modified(validators, header(connection, MHD_HTTP_HEADER_IF_NONE_MATCH),
                                header(connection, MHD_HTTP_HEADER_IF_MODIFIED_SINCE))) {
            answer.status = MHD_HTTP_NOT_MODIFIED;
            return false;
        }
        answer.headers.emplace_back(MHD_HTTP_HEADER_CONTENT_TYPE, content_type(key));
        return true;
    }

    // A listed package the store lacks, of an on-demand or streamed job. A HEAD, a 304 or a
    // whole GET is answered here (the GET with the bytes passed on as they arrive): returns
    // nullopt. A ranged GET (or one of a package of unknown size) waits for the verified
    // package, and a package kept meanwhile is opened: returns it to be answered as a held one.
    // Upstream failing before any byte: 502.
    std::optional<Result<serve::HeldFile>> fetch_from_upstream(
        MHD_Connection* connection, JobCatalogue& catalogue, serve::OnDemand& fetches,
        const serve::Found& found, const std::string& key, std::string_view method,
        Answer& answer) {
        const serve::ListedFile& file = found.file;
        const bool ranged = header(connection, MHD_HTTP_HEADER_RANGE).has_value();
        if (method == MHD_HTTP_METHOD_HEAD || !ranged) {
            if (!validated(connection, file, key, answer)) {
                return std::nullopt;
            }
            if (method == MHD_HTTP_METHOD_HEAD && file.size > 0) {
                answer.status = MHD_HTTP_OK;
                answer.length = file.size;
                answer.streamed = true;
                return std::nullopt;
            }
            answer.headers.clear();
        }
        serve::WantedPackage wanted{
            key, file.size, file.checksum_type,
            file.etag.size() > 2 ? file.etag.substr(1, file.etag.size() - 2) : std::string()};
        auto fetch = fetches.fetch(wanted);
        if (fetch && !*fetch) {
            return catalogue.open(key);  // kept since the caller looked
        }
        if (fetch && !ranged && file.size > 0) {
            if (auto started = (*fetch)->wait_started(); !started) {
                fetch = tl::unexpected(std::move(started.error()));
            } else {
                validated(connection, file, key, answer);
                answer.status = MHD_HTTP_OK;
                answer.length = file.size;
                answer.streamed = true;
                answer.fetch = std::move(*fetch);
                answer.reason = "(fetched from upstream)";
                return std::nullopt;
            }
        }
        if (fetch) {
            auto verified = (*fetch)->wait_verified();
            if (verified) {
                serve::HeldFile held;
                held.fd = std::move(*verified);
                struct stat st {};
                if (::fstat(held.fd.get(), &st) == 0) {
                    held.size = static_cast<std::uint64_t>(st.st_size);
                    return Result<serve::HeldFile>(std::move(held));
                }
                return Result<serve::HeldFile>(
                    make_errno_error("cannot stat the fetched package", key, errno));
            }
            fetch = tl::unexpected(std::move(verified.error()));
        }
        answer.status = MHD_HTTP_BAD_GATEWAY;
        answer.reason = "(upstream: " + fetch.error().to_string() + ")";
        return std::nullopt;
    }

    static Response make_response(Answer& answer) {
        if (answer.streamed) {
            auto reader = std::make_unique<StreamReader>(StreamReader{answer.fetch, 0});
            Response response(MHD_create_response_from_callback(
                answer.length, 64 * 1024, read_stream, reader.get(), free_stream));
            if (response) {
                (void)reader.release();
            }
            return response;
        }
        if (!answer.body || answer.length == 0) {
            return Response(MHD_create_response_from_buffer(0, nullptr, MHD_RESPMEM_PERSISTENT));
        }
        if (answer.body->fd) {
            // MHD closes the descriptor it is given: a duplicate of the held one (several
            // responses may read it at once; each reads at its own offsets).
            UniqueFd fd(::fcntl(answer.body->fd.get(), F_DUPFD_CLOEXEC, 0));
            if (!fd) {
                return nullptr;
            }
            Response response(MHD_create_response_from_fd_at_offset64(
                answer.length, fd.get(), static_cast<std::int64_t>(answer.offset)));
            if (response) {
                (void)fd.release();
            }
            return response;
        }
        auto reader = std::make_unique<BytesReader>(BytesReader{answer.body, answer.offset});
        Response response(MHD_create_response_from_callback(answer.length, 64 * 1024, read_bytes,
                                                            reader.get(), free_reader));
        if (response) {
            (void)reader.release();
        }
        return response;
    }

    std::map<std::string, std::unique_ptr<JobCatalogue>> jobs_;
    // The jobs whose packages are fetched on demand (or streamed); destroyed (their fetches
    // stopped) first (~Server).
    std::map<std::string, std::unique_ptr<serve::OnDemand>> on_demand_;
    ServeEvents& events_;
    std::mutex events_mutex_;
    serve::ServeCounters counters_;
    // The jobs with cache-max-size (bound_jobs); they use jobs_ and counters_.
    std::map<std::string, std::unique_ptr<serve::HeldPackages>> held_;
};

MHD_Result on_request(void* cls, MHD_Connection* connection, const char* url, const char* method,
                      const char* /*version*/, const char* /*upload_data*/,
                      std::size_t* upload_data_size, void** request_state) {
    // The first call only marks the request: a response queued before the request is read whole
    // would make the library close the connection after it (no keep-alive).
    static char seen = 0;
    if (*request_state == nullptr) {
        *request_state = &seen;
        return MHD_YES;
    }
    if (*upload_data_size != 0) {  // a body (no method served here takes one): dropped
        *upload_data_size = 0;
        return MHD_YES;
    }
    return static_cast<Server*>(cls)->handle(connection, url, method);
}

// Splits "HOST:PORT" ("[V6]:PORT") and resolves it (numeric or a name).
Result<std::unique_ptr<addrinfo, AddrinfoFreer>> resolve_listen(const std::string& address) {
    const std::size_t colon = address.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) {
        return make_error(ErrorCode::BadInput, "expected ADDR:PORT",
                          "listen address '" + address + "'");
    }
    std::string host = address.substr(0, colon);
    const std::string port = address.substr(colon + 1);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    if (const int code = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); code != 0) {
        return make_error(ErrorCode::BadInput, ::gai_strerror(code),
                          "listen address '" + address + "'");
    }
    return std::unique_ptr<addrinfo, AddrinfoFreer>(found);
}

// Starts a daemon answering for `server`: on `address` ("HOST:PORT"), or on `socket` (an open
// listening socket, e.g. one systemd passed) when it is not -1; `bound` is then the address it
// listens on, numeric.
Result<Daemon> start_daemon(const std::string& address, int socket, Server& server,
                            std::string& bound) {
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION;
    std::unique_ptr<addrinfo, AddrinfoFreer> resolved;
    if (socket == -1) {
        auto found = resolve_listen(address);
        if (!found) {
            return tl::unexpected(std::move(found.error()));
        }
        resolved = std::move(*found);
        if (resolved->ai_family == AF_INET6) {
            flags |= MHD_USE_IPv6;
        }
    }
    // Where it listens, the one option that differs (an integer option's argument is `value`, a
    // pointer's `ptr_value`).
    MHD_OptionItem where[] = {socket == -1
                                  ? MHD_OptionItem{MHD_OPTION_SOCK_ADDR, 0, resolved->ai_addr}
                                  : MHD_OptionItem{MHD_OPTION_LISTEN_SOCKET, socket, nullptr},
                              MHD_OptionItem{MHD_OPTION_END, 0, nullptr}};
    errno = 0;
    Daemon daemon(MHD_start_daemon(flags, 0, nullptr, nullptr, on_request, &server,
                                   MHD_OPTION_ARRAY, where, MHD_OPTION_UNESCAPE_CALLBACK, keep_raw,
                                   nullptr, MHD_OPTION_CONNECTION_TIMEOUT, 120U, MHD_OPTION_END));
    if (!daemon) {
        return make_errno_error("cannot listen", "listen address '" + address + "'",
                                errno != 0 ? errno : EADDRNOTAVAIL);
    }
    const MHD_DaemonInfo* info = MHD_get_daemon_info(daemon.get(), MHD_DAEMON_INFO_LISTEN_FD);
    sockaddr_storage local{};
    socklen_t length = sizeof local;
    if (info != nullptr &&
        ::getsockname(info->listen_fd, reinterpret_cast<sockaddr*>(&local), &length) == 0) {
        bound = numeric_address(reinterpret_cast<const sockaddr*>(&local), length);
    } else {
        bound = address;
    }
    return daemon;
}

// The cache-max-size of `job` (an on-demand job's), with what its kept snapshots hold as the
// request tells; nullopt iff it has none.
std::optional<CacheBound> cache_bound(const ServeRequest& request, const JobConfig& job) {
    const std::uint64_t bytes =
        request.cache_max_size ? *request.cache_max_size : job.options.cache_max_size;
    if (bytes == 0 || job.options.download_policy != DownloadPolicy::OnDemand) {
        return std::nullopt;
    }
    CacheBound bound;
    bound.bytes = bytes;
    if (request.snapshot_keys) {
        bound.snapshot_keys = [keys = request.snapshot_keys, job] { return keys(job); };
    }
    return bound;
}

}  // namespace

Result<void> run_server(const ServeRequest& request, ServeEvents& events, std::stop_token stop) {
    JobsLoadOptions load;
    load.config_file = request.config_file;
    std::vector<ConfigWarning> warnings;
    auto config = load_jobs_config(load, warnings);
    if (!config) {
        return tl::unexpected(std::move(config.error()));
    }
    for (const ConfigWarning& warning : warnings) {
        events.warning(warning.to_string());
    }
    auto selected = select_jobs(std::move(config->jobs), request.job_patterns);
    if (!selected) {
        return tl::unexpected(std::move(selected.error()));
    }
    // Sockets systemd passed (rpmirror-serve.socket) replace every listen address.
    auto activated = serve::activated_sockets();
    if (!activated) {
        return tl::unexpected(std::move(activated.error()));
    }
    const std::vector<std::string>& listen =
        request.listen.empty() ? config->listen : request.listen;
    if (listen.empty() && activated->empty()) {
        return make_error(ErrorCode::BadInput,
                          "no address to listen on (--listen ADDR:PORT, or listen = in [main])",
                          request.config_file.string());
    }
    std::map<std::string, std::unique_ptr<JobCatalogue>> jobs;
    std::map<std::string, std::unique_ptr<serve::OnDemand>> on_demand;
    std::map<std::string, CacheBound> bounds;
    for (const JobConfig& job : *selected) {
        if (!job.errors.empty()) {
            return make_error(ErrorCode::BadInput, job.errors.front());
        }
        const std::string destination = job.options.download_path.string();
        auto store = store::open_object_store(destination, job.options.s3);
        if (!store) {
            return tl::unexpected(std::move(store.error()));
        }
        auto catalogue = std::make_unique<JobCatalogue>(job.name, std::move(*store), request.grace);
        if (auto loaded = catalogue->refresh(true); !loaded) {
            events.warning(fmt::format("{}: {} (served once a sync publishes it)", job.name,
                                       loaded.error().to_string()));
        }
        events.serving(job.name, destination);
        if (job.options.download_policy != DownloadPolicy::Immediate) {
            on_demand.emplace(job.name,
                              std::make_unique<serve::OnDemand>(*catalogue, job.repo, job.options));
        }
        if (auto bound = cache_bound(request, job)) {
            bounds.emplace(job.name, std::move(*bound));
        }
        jobs.emplace(job.name, std::move(catalogue));
    }
    if (jobs.empty()) {
        return make_error(ErrorCode::BadInput, "no job to serve", request.config_file.string());
    }
    Server server(std::move(jobs), std::move(on_demand), std::move(bounds), events);
    std::vector<Daemon> daemons;
    const std::size_t count = activated->empty() ? listen.size() : activated->size();
    std::vector<std::string> bound(count);
    for (std::size_t i = 0; i < count; ++i) {
        auto daemon = activated->empty() ? start_daemon(listen[i], -1, server, bound[i])
                                         : start_daemon("socket " + std::to_string((*activated)[i]),
                                                        (*activated)[i], server, bound[i]);
        if (!daemon) {
            return tl::unexpected(std::move(daemon.error()));
        }
        daemons.push_back(std::move(*daemon));
    }
    for (const std::string& address : bound) {
        events.listening(address);
    }
    std::mutex mutex;
    std::condition_variable_any stopped;
    std::unique_lock lock(mutex);
    stopped.wait(lock, stop, [] { return false; });
    return {};
}

}  // namespace rpmirror
