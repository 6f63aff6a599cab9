// Small documents of unknown size (repomd.xml, mirrorlists, metalinks) fetched into memory, in a
// multi handle (so that a stop request ends the wait at once): one of their own, or a
// Downloader's, whose open connections they then reuse and leave open for its transfers.
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <optional>
#include <stop_token>

#include "download/curl_handles.hpp"
#include "download/curl_options.hpp"
#include "download/download.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror {

namespace {

struct Body {
    std::string bytes;
    std::uint64_t limit = 0;
    bool too_large = false;
};

std::size_t append_body(char* data, std::size_t size, std::size_t count, void* user) {
    auto* body = static_cast<Body*>(user);
    const std::size_t length = size * count;
    if (body->bytes.size() + length > body->limit) {
        body->too_large = true;
        return 0;  // aborts the transfer
    }
    body->bytes.append(data, length);
    return length;
}

Result<std::string> read_local_document(const std::string& url, const std::string& path,
                                        std::uint64_t max_bytes) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (!fd) {
        return make_errno_error("cannot open", url, errno);
    }
    std::string bytes;
    std::array<char, 64 * 1024> buffer{};
    for (;;) {
        const ssize_t count = ::read(fd.get(), buffer.data(), buffer.size());
        if (count < 0) {
            if (errno == EINTR) {
                continue;
            }
            return make_errno_error("cannot read", url, errno);
        }
        if (count == 0) {
            return bytes;
        }
        if (bytes.size() + static_cast<std::size_t>(count) > max_bytes) {
            return make_error(ErrorCode::Unsafe,
                              "larger than " + std::to_string(max_bytes) + " bytes; refused", url);
        }
        bytes.append(buffer.data(), static_cast<std::size_t>(count));
    }
}

// Returns " (<title>)" for an HTML error page with a short printable <title> (nginx says why
// it answered 400, e.g. "No required SSL certificate was sent"), else "".
std::string error_page_title(std::string_view page) {
    constexpr std::size_t kMaxTitle = 120;
    const auto open = page.find("<title>");
    const auto close = open == std::string_view::npos ? open : page.find("</title>", open);
    if (close == std::string_view::npos || close - open - 7 > kMaxTitle) {
        return {};
    }
    const std::string_view title = page.substr(open + 7, close - open - 7);
    for (const char c : title) {
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) {
            return {};
        }
    }
    return title.empty() ? std::string() : " (" + std::string(title) + ")";
}

}  // namespace

namespace download {

namespace {

// Keeps `easy` in `multi` for the lifetime of this object.
class Attached {
  public:
    Attached(CURLM* multi, CURL* easy) : multi_(multi), easy_(easy) {
        curl_multi_add_handle(multi_, easy_);
    }
    Attached(const Attached&) = delete;
    Attached& operator=(const Attached&) = delete;
    ~Attached() { curl_multi_remove_handle(multi_, easy_); }

  private:
    CURLM* multi_;
    CURL* easy_;
};

}  // namespace

std::optional<CURLcode> perform_in(CURLM* multi, CURL* easy, const std::stop_token& stop) {
    const Attached attached(multi, easy);
    const std::stop_callback wake(stop, [multi] { curl_multi_wakeup(multi); });
    for (;;) {
        int running = 0;
        const CURLMcode performed = curl_multi_perform(multi, &running);
        int left = 0;
        while (CURLMsg* message = curl_multi_info_read(multi, &left)) {
            if (message->msg == CURLMSG_DONE && message->easy_handle == easy) {
                return message->data.result;
            }
        }
        if (performed != CURLM_OK) {
            return CURLE_OUT_OF_MEMORY;
        }
        if (stop.stop_requested()) {
            return std::nullopt;
        }
        curl_multi_poll(multi, nullptr, 0, 1000, nullptr);
    }
}

std::optional<CURLcode> perform_alone(CURL* easy, const std::stop_token& stop) {
    const CurlMulti multi(curl_multi_init());
    if (!multi) {
        return CURLE_OUT_OF_MEMORY;
    }
    return perform_in(multi.get(), easy, stop);
}

Result<std::string> fetch_document_in(CURLM* multi, const std::string& url,
                                      const DownloadOptions& options, std::uint64_t max_bytes,
                                      std::stop_token stop, std::int64_t* last_modified) {
    if (last_modified != nullptr) {
        *last_modified = -1;
    }
    if (stop.stop_requested()) {
        return make_error(ErrorCode::Interrupted, "interrupted", url);
    }
    if (auto path = download::file_url_path(url)) {
        return read_local_document(url, *path, max_bytes);
    }
    ensure_curl_initialized();
    CurlEasy easy(curl_easy_init());
    if (!easy) {
        return make_error(ErrorCode::Network, "cannot create a libcurl handle", url);
    }
    download::CurlSlist headers;
    if (!download::append_request_headers(headers, options)) {
        return make_error(ErrorCode::Network, "cannot allocate the request headers", url);
    }
    const std::string user_agent = download::user_agent_for(options);
    Body body{{}, max_bytes, false};
    std::array<char, CURL_ERROR_SIZE> error_buffer{};
    download::RedirectGuard redirects;
    download::apply_connection_options(easy.get(), options, url, user_agent, headers.get(),
                                       redirects);
    curl_easy_setopt(easy.get(), CURLOPT_URL, url.c_str());
    curl_easy_setopt(easy.get(), CURLOPT_WRITEFUNCTION, &append_body);
    curl_easy_setopt(easy.get(), CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(easy.get(), CURLOPT_ERRORBUFFER, error_buffer.data());
    if (last_modified != nullptr) {
        curl_easy_setopt(easy.get(), CURLOPT_FILETIME, 1L);
    }
    const std::optional<CURLcode> performed = multi != nullptr
                                                  ? download::perform_in(multi, easy.get(), stop)
                                                  : download::perform_alone(easy.get(), stop);
    if (!performed) {
        return make_error(ErrorCode::Interrupted, "interrupted", url);
    }
    const CURLcode code = *performed;
    if (body.too_large) {
        return make_error(ErrorCode::Unsafe,
                          "larger than " + std::to_string(max_bytes) + " bytes; refused", url);
    }
    if (code != CURLE_OK) {
        return make_error(
            ErrorCode::Network,
            download::describe_curl_failure(easy.get(), code, url, error_buffer.data(), redirects),
            url);
    }
    long status = 0;
    curl_easy_getinfo(easy.get(), CURLINFO_RESPONSE_CODE, &status);
    if (status == 404 || status == 410) {
        return make_error(ErrorCode::NotFound, "HTTP " + std::to_string(status), url);
    }
    if (status >= 400) {
        return make_error(ErrorCode::Network,
                          "HTTP " + std::to_string(status) + error_page_title(body.bytes), url);
    }
    if (curl_off_t filetime = -1;
        last_modified != nullptr &&
        curl_easy_getinfo(easy.get(), CURLINFO_FILETIME_T, &filetime) == CURLE_OK) {
        *last_modified = static_cast<std::int64_t>(filetime);
    }
    return std::move(body.bytes);
}

}  // namespace download

Result<std::string> fetch_document(const std::string& url, const DownloadOptions& options,
                                   std::uint64_t max_bytes, std::stop_token stop,
                                   std::int64_t* last_modified) {
    return download::fetch_document_in(nullptr, url, options, max_bytes, std::move(stop),
                                       last_modified);
}

}  // namespace rpmirror
