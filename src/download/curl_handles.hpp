// Move-only RAII owners of libcurl handles: CurlEasy (CURL*), CurlMulti (CURLM*), CurlSlist
// (curl_slist*), and the one-time global initialisation.
#pragma once

#include <curl/curl.h>

#include <memory>
#include <string>

namespace rpmirror::download {

// Calls curl_global_init once per process (thread-safe, C++ static initialisation). libcurl is
// never globally cleaned up: other parts of the process may still hold handles at exit.
void ensure_curl_initialized();

struct CurlEasyDeleter {
    void operator()(CURL* easy) const { curl_easy_cleanup(easy); }
};
struct CurlMultiDeleter {
    void operator()(CURLM* multi) const { curl_multi_cleanup(multi); }
};
struct CurlSlistDeleter {
    void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

using CurlEasy = std::unique_ptr<CURL, CurlEasyDeleter>;
using CurlMulti = std::unique_ptr<CURLM, CurlMultiDeleter>;

// A curl_slist (request headers), appended to one string at a time.
class CurlSlist {
  public:
    // Returns false iff libcurl could not allocate the entry.
    bool append(const std::string& line) {
        curl_slist* extended = curl_slist_append(list_.get(), line.c_str());
        if (extended == nullptr) {
            return false;
        }
        (void)list_.release();
        list_.reset(extended);
        return true;
    }
    curl_slist* get() const { return list_.get(); }

  private:
    std::unique_ptr<curl_slist, CurlSlistDeleter> list_;
};

}  // namespace rpmirror::download
