#ifndef CATALOG_IMPL_PRINCIPAL_IPP
#define CATALOG_IMPL_PRINCIPAL_IPP

#include <catalog/principal.hpp>

namespace catalog {

std::string_view operation_name(Operation op) noexcept {
  switch (op) {
    case Operation::create: return "Create";
    case Operation::delete_: return "Delete";
    case Operation::view_basic: return "ViewBasic";
    case Operation::view_all: return "ViewAll";
    case Operation::edit_all: return "EditAll";
    case Operation::edit_description: return "EditDescription";
    case Operation::edit_display_name: return "EditDisplayName";
    case Operation::edit_owners: return "EditOwners";
    case Operation::edit_tags: return "EditTags";
    case Operation::edit_reviewers: return "EditReviewers";
    case Operation::edit_users: return "EditUsers";
    case Operation::edit_policy: return "EditPolicy";
    case Operation::follow: return "Follow";
    case Operation::edit_followers: return "EditFollowers";
    case Operation::edit_votes: return "EditVotes";
  }
  return "";
}

}  // namespace catalog

#endif  // CATALOG_IMPL_PRINCIPAL_IPP
